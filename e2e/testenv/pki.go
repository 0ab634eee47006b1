package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// pki is the set of certificates and keys one kube-apiserver needs, written
// as PEM files into one directory. Everything is generated here with
// crypto/x509: no openssl on the machine is needed.
type pki struct {
	caCert           []byte // PEM, also the client CA
	caFile           string
	servingCertFile  string
	servingKeyFile   string
	adminCert        []byte // PEM, CN=wasmsched-testenv-admin, O=system:masters
	adminKey         []byte // PEM
	saPublicKeyFile  string
	saPrivateKeyFile string
}

// newPKI writes a CA, a serving certificate for 127.0.0.1/localhost, an admin
// client certificate in system:masters and an RSA service-account key pair
// into dir. They are generated once per process (the RSA key alone takes
// 100-250 ms on a busy 2-core machine) and shared by all its control planes,
// which trust each other's clients and tokens as a result: harmless here.
func newPKI(dir string) (*pki, error) {
	m, err := sharedPKI()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		caCert:           m.caCert,
		caFile:           filepath.Join(dir, "ca.crt"),
		servingCertFile:  filepath.Join(dir, "apiserver.crt"),
		servingKeyFile:   filepath.Join(dir, "apiserver.key"),
		adminCert:        m.adminCert,
		adminKey:         m.adminKey,
		saPublicKeyFile:  filepath.Join(dir, "sa.pub"),
		saPrivateKeyFile: filepath.Join(dir, "sa.key"),
	}
	for _, f := range []struct {
		path string
		data []byte
	}{
		{p.caFile, m.caCert},
		{p.servingCertFile, m.servingCert},
		{p.servingKeyFile, m.servingKey},
		{filepath.Join(dir, "admin.crt"), m.adminCert},
		{filepath.Join(dir, "admin.key"), m.adminKey},
		{p.saPublicKeyFile, m.saPublicKey},
		{p.saPrivateKeyFile, m.saPrivateKey},
	} {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// pkiMaterial is the PEM content of the files newPKI writes.
type pkiMaterial struct {
	caCert, servingCert, servingKey, adminCert, adminKey, saPublicKey, saPrivateKey []byte
}

var sharedPKI = sync.OnceValues(generatePKI)

func generatePKI() (*pkiMaterial, error) {
	now := time.Now()
	notBefore, notAfter := now.Add(-time.Hour), now.Add(365*24*time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "wasmsched-testenv-ca"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	leaf := func(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = serial()
		tmpl.NotBefore, tmpl.NotAfter = notBefore, notAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
		if err != nil {
			return nil, nil, err
		}
		keyPEM, err = privateKeyPEM(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
	}

	servingCert, servingKey, err := leaf(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, fmt.Errorf("sign serving certificate: %w", err)
	}
	adminCert, adminKey, err := leaf(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "wasmsched-testenv-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("sign admin client certificate: %w", err)
	}

	// Service-account tokens are signed with RS256 by default; an RSA key is
	// what every issuer configuration accepts.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	saPrivPEM, err := privateKeyPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}

	return &pkiMaterial{
		caCert:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		servingCert:  servingCert,
		servingKey:   servingKey,
		adminCert:    adminCert,
		adminKey:     adminKey,
		saPublicKey:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
		saPrivateKey: saPrivPEM,
	}, nil
}

func privateKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
