package testenv

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// serviceAccountTokenSeconds is the lifetime asked of the TokenRequest API.
const serviceAccountTokenSeconds = 24 * 60 * 60

// ServiceAccountKubeconfig creates the ServiceAccount namespace/name (if it
// does not exist), gets it a token through the TokenRequest API and writes a
// kubeconfig that authenticates with that token, so a test can run the
// scheduler with exactly the permissions RBAC grants that account (see
// Apply). The token is valid for 24 h. The file is in Dir and goes with Stop.
func (e *Env) ServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	token, err := e.ServiceAccountToken(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.dir, e.nextName(fmt.Sprintf("sa-%s-%s", namespace, name))+".kubeconfig")
	if err := writeKubeconfig(path, e.host, e.pki.caCert, &clientcmdapi.AuthInfo{Token: token}); err != nil {
		return "", err
	}
	return path, nil
}

// ServiceAccountToken creates the ServiceAccount namespace/name (if it does
// not exist) and returns a bearer token for it from the TokenRequest API,
// valid for 24 h, for the apiserver's audiences: what a scraper presents to
// the scheduler's secure port.
func (e *Env) ServiceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	_, err := e.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create ServiceAccount %s/%s: %w", namespace, name, err)
	}
	seconds := int64(serviceAccountTokenSeconds)
	tr, err := e.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}
