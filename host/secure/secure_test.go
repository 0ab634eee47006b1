package secure

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
)

// pair is a PEM certificate and key.
type pair struct{ cert, key []byte }

// newCA makes a CA and returns it with a function that signs client
// certificates for a user and groups.
func newCA(t *testing.T) (caPEM []byte, sign func(cn string, groups ...string) pair) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	serial := int64(1)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), func(cn string, groups ...string) pair {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		serial++
		leaf := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn, Organization: groups},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, leaf, ca, key.Public(), caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pair{pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})}
	}
}

// apiServer is a fake API server's answers: tokens maps a bearer token to
// its user (absent: not authenticated); allowed maps user to the paths a
// SubjectAccessReview allows it to get.
type apiServer struct {
	tokens  map[string]authenticationv1.UserInfo
	allowed map[string][]string
	sars    atomic.Int32
}

// client is a clientset whose TokenReviews and SubjectAccessReviews reach
// s over HTTP (the delegating authenticator and authorizer use the REST
// client itself, which a fake clientset lacks) and whose ConfigMaps are a
// fake's, holding the client CA caPEM.
func (s *apiServer) client(t *testing.T, caPEM []byte) kubernetes.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var out any
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var tr authenticationv1.TokenReview
			if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			u, ok := s.tokens[tr.Spec.Token]
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok, User: u}
			out = &tr
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			s.sars.Add(1)
			var sar authorizationv1.SubjectAccessReview
			if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			nr := sar.Spec.NonResourceAttributes
			for _, p := range s.allowed[sar.Spec.User] {
				if nr != nil && nr.Verb == "get" && nr.Path == p {
					sar.Status.Allowed = true
				}
			}
			out = &sar
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	real, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return reviews{
		Clientset: fake.NewClientset(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: authConfigMapNamespace, Name: authConfigMapName},
			Data:       map[string]string{clientCAKey: string(caPEM)},
		}),
		real: real,
	}
}

// reviews sends the reviews to a real client, the rest to a fake.
type reviews struct {
	*fake.Clientset
	real kubernetes.Interface
}

func (r reviews) AuthenticationV1() authenticationv1client.AuthenticationV1Interface {
	return r.real.AuthenticationV1()
}

func (r reviews) AuthorizationV1() authorizationv1client.AuthorizationV1Interface {
	return r.real.AuthorizationV1()
}

// serve runs a Server on a free loopback port for the test's duration.
func serve(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

// request makes a GET (or the method given) with an optional token and
// client certificate, and returns the status.
func request(t *testing.T, addr, method, path, token string, clientCert *pair) int {
	t.Helper()
	tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed test server
	if clientCert != nil {
		kp, err := tls.X509KeyPair(clientCert.cert, clientCert.key)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{kp}
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(method, "https://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

func handler() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/livez", "/metrics", "/policies"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	}
	return mux
}

// TestAuth: anonymous callers reach the public paths only (401 elsewhere);
// a token is reviewed and its user authorized per path (403 when not);
// a client certificate of the API server's client CA in system:masters
// needs no review; one of another CA is anonymous.
func TestAuth(t *testing.T) {
	caPEM, sign := newCA(t)
	_, otherSign := newCA(t)
	api := &apiServer{
		tokens: map[string]authenticationv1.UserInfo{
			"reader-token": {Username: "reader", Groups: []string{"system:authenticated"}},
			"nobody-token": {Username: "nobody", Groups: []string{"system:authenticated"}},
		},
		allowed: map[string][]string{"reader": {"/metrics"}},
	}
	s, err := New("127.0.0.1:0", api.client(t, caPEM), handler(), WithPublicPaths("/livez"))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s)
	masters, other := sign("admin", "system:masters"), otherSign("admin", "system:masters")
	plainUser := sign("someone")

	for _, c := range []struct {
		name, method, path, token string
		cert                      *pair
		want                      int
	}{
		{"public path, anonymous", "GET", "/livez", "", nil, 200},
		{"metrics, anonymous", "GET", "/metrics", "", nil, 401},
		{"unknown path, anonymous", "GET", "/nothing", "", nil, 401},
		{"unknown token, public path", "GET", "/livez", "bad-token", nil, 401},
		{"unknown token", "GET", "/metrics", "bad-token", nil, 401},
		{"token allowed metrics", "GET", "/metrics", "reader-token", nil, 200},
		{"token not allowed policies", "GET", "/policies", "reader-token", nil, 403},
		{"token of a user without rights", "GET", "/metrics", "nobody-token", nil, 403},
		{"public path with a token", "GET", "/livez", "nobody-token", nil, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := request(t, s.Addr(), c.method, c.path, c.token, c.cert); got != c.want {
				t.Errorf("%s %s: %d, want %d", c.method, c.path, got, c.want)
			}
		})
	}

	// The client CA comes from the ConfigMap's informer, shortly after
	// Serve starts: poll for it.
	deadline := time.Now().Add(30 * time.Second)
	for request(t, s.Addr(), "GET", "/policies", "", &masters) != 200 {
		if time.Now().After(deadline) {
			t.Fatal("a system:masters certificate of the client CA was not allowed /policies within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := request(t, s.Addr(), "GET", "/metrics", "", &plainUser); got != 403 {
		t.Errorf("GET /metrics with a certificate of a user without rights: %d, want 403", got)
	}
	if got := request(t, s.Addr(), "GET", "/metrics", "", &other); got != 401 {
		t.Errorf("GET /metrics with a system:masters certificate of another CA: %d, want 401", got)
	}
	before := api.sars.Load()
	if got := request(t, s.Addr(), "POST", "/policies/queueSort", "", &masters); got != http.StatusNotFound && got != http.StatusMethodNotAllowed {
		t.Errorf("POST to a route the handler lacks: %d, want 404 or 405", got)
	}
	if n := api.sars.Load() - before; n != 0 {
		t.Errorf("%d SubjectAccessReviews for system:masters, want none", n)
	}
}

// TestNoPublicPaths: without public paths nothing is anonymous.
func TestNoPublicPaths(t *testing.T) {
	caPEM, _ := newCA(t)
	s, err := New("127.0.0.1:0", (&apiServer{}).client(t, caPEM), handler())
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s)
	if got := request(t, s.Addr(), "GET", "/livez", "", nil); got != 401 {
		t.Errorf("GET /livez anonymous: %d, want 401", got)
	}
}

// TestCertFiles: given files are served; missing, unreadable or
// mismatched ones fail New with the key named.
func TestCertFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c1, k1, err := cert.GenerateSelfSignedCertKey("one.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, k2, err := cert.GenerateSelfSignedCertKey("two.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	crt, key, otherKey := write("tls.crt", c1), write("tls.key", k1), write("other.key", k2)
	garbage := write("garbage", []byte("not PEM"))

	caPEM, _ := newCA(t)
	client := (&apiServer{}).client(t, caPEM)
	s, err := New("127.0.0.1:0", client, handler(), WithCertFiles(crt, key), WithPublicPaths("/livez"))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s)
	conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // checking which certificate is served
	if err != nil {
		t.Fatal(err)
	}
	served := conn.ConnectionState().PeerCertificates[0]
	_ = conn.Close()
	if served.Subject.CommonName != "one.example" && !strings.Contains(strings.Join(served.DNSNames, ","), "one.example") {
		t.Errorf("served %v %v, want the certificate of %s", served.Subject, served.DNSNames, crt)
	}

	for _, c := range []struct {
		name, cert, key string
		want            []string
	}{
		{"missing certificate", filepath.Join(dir, "absent.crt"), key, []string{"secureServing.certFile", "absent.crt", "no such file"}},
		{"missing key", crt, filepath.Join(dir, "absent.key"), []string{"secureServing.keyFile", "absent.key"}},
		{"not PEM", garbage, key, []string{"secureServing.certFile " + garbage, "want a PEM certificate and its PEM private key"}},
		{"key of another certificate", crt, otherKey, []string{"secureServing.certFile", "want a PEM certificate"}},
		{"certificate without key", crt, "", []string{"set both or neither"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New("127.0.0.1:0", client, handler(), WithCertFiles(c.cert, c.key))
			if err == nil {
				s.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestSelfSigned: with no files the certificate is made for localhost and
// 127.0.0.1, so a client trusting it can verify the connection.
func TestSelfSigned(t *testing.T) {
	caPEM, _ := newCA(t)
	s, err := New("127.0.0.1:0", (&apiServer{}).client(t, caPEM), handler(), WithPublicPaths("/livez"))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s)
	conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // fetching the certificate to trust
	if err != nil {
		t.Fatal(err)
	}
	chain := conn.ConnectionState().PeerCertificates
	_ = conn.Close()
	pool := x509.NewCertPool()
	pool.AddCert(chain[len(chain)-1])
	for _, name := range []string{"localhost", "127.0.0.1"} {
		if err := verify(chain, pool, name); err != nil {
			t.Errorf("certificate for %s: %v", name, err)
		}
	}
}

func verify(chain []*x509.Certificate, roots *x509.CertPool, name string) error {
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: name})
	if err != nil && len(chain) == 1 {
		return errors.Join(err, errors.New("(one certificate, self-signed)"))
	}
	return err
}

// TestListenError: an address in use fails New with the key named.
func TestListenError(t *testing.T) {
	caPEM, _ := newCA(t)
	client := (&apiServer{}).client(t, caPEM)
	s, err := New("127.0.0.1:0", client, handler())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = New(s.Addr(), client, handler())
	if err == nil || !strings.Contains(err.Error(), "secureServing.bindAddress "+s.Addr()) {
		t.Errorf("New on a bound address: %v, want an error naming secureServing.bindAddress", err)
	}
}

// TestServeClosedListener: Serve on a closed listener returns the error
// and stops what it started, rather than hanging.
func TestServeClosedListener(t *testing.T) {
	caPEM, _ := newCA(t)
	s, err := New("127.0.0.1:0", (&apiServer{}).client(t, caPEM), handler())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "serve HTTPS on "+s.Addr()) {
			t.Errorf("Serve on a closed listener: %v, want an error naming the address", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve on a closed listener did not return within 30s")
	}
}
