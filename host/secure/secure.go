// Package secure serves an http.Handler over HTTPS behind the API server's
// authentication and authorization, as kube-scheduler's secure port does:
// a caller is authenticated by a bearer token (TokenReview) or a client
// certificate (signed by the client CA the API server publishes in
// kube-system/extension-apiserver-authentication), and authorized by a
// SubjectAccessReview on the request's non-resource URL and verb (get
// /metrics). A few public paths, the probes, need no credentials, and the
// group system:masters needs no review: both are upstream's defaults.
//
// The pieces are k8s.io/apiserver's delegating authenticator and authorizer
// and its handler filters; this package only assembles them with the
// scheduler's own client and a listener.
//
// # Notes
//
// Front-proxy (request-header) authentication is not configured: the
// endpoints are for scrapers and operators, not for the aggregation layer.
package secure

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericfilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	serverfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/cert"
)

// Upstream's defaults (k8s.io/apiserver/pkg/server/options:
// NewDelegatingAuthenticationOptions, NewDelegatingAuthorizationOptions).
const (
	// tokenCacheTTL is how long a TokenReview's answer is reused.
	tokenCacheTTL = 10 * time.Second
	// tokenReviewTimeout bounds one TokenReview.
	tokenReviewTimeout = 10 * time.Second
	// allowCacheTTL and denyCacheTTL are how long a SubjectAccessReview's
	// answer is reused: short, so that a changed RoleBinding takes effect
	// soon.
	allowCacheTTL = 10 * time.Second
	denyCacheTTL  = 10 * time.Second
)

// webhookRetryBackoff retries a TokenReview or SubjectAccessReview that
// failed (DefaultAuthWebhookRetryBackoff upstream).
func webhookRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// The ConfigMap in which the API server publishes the CA of the client
// certificates it accepts.
const (
	authConfigMapNamespace = "kube-system"
	authConfigMapName      = "extension-apiserver-authentication"
	clientCAKey            = "client-ca-file"
)

// privilegedGroup needs no SubjectAccessReview: the API server allows it
// everything anyway.
const privilegedGroup = user.SystemPrivilegedGroup

// Server is an HTTPS listener serving a handler behind delegated
// authentication and authorization. New binds it; Serve serves it until
// its context ends.
type Server struct {
	log        *slog.Logger
	ln         net.Listener
	handler    http.Handler // the filter chain around the caller's handler
	cert       dynamiccertificates.CertKeyContentProvider
	clientCA   *dynamiccertificates.ConfigMapCAController
	selfSigned bool

	closeOnce sync.Once
}

// Option configures New.
type Option func(*options)

type options struct {
	log               *slog.Logger
	certFile, keyFile string
	public            []string
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithCertFiles serves the PEM certificate (chain) and key of these files,
// reloaded when they change. Without it, New makes a self-signed
// certificate.
func WithCertFiles(certFile, keyFile string) Option {
	return func(o *options) { o.certFile, o.keyFile = certFile, keyFile }
}

// WithPublicPaths lets anyone read these exact paths, without credentials
// (the probes: a kubelet has none).
func WithPublicPaths(paths ...string) Option {
	return func(o *options) { o.public = append(o.public, paths...) }
}

// New checks the serving certificate, builds the authenticator and
// authorizer on client and binds addr (host:port). The listener is closed
// by Serve when its context ends, or by Close.
func New(addr string, client kubernetes.Interface, handler http.Handler, opts ...Option) (*Server, error) {
	o := options{log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{log: o.log}
	var err error
	if s.cert, s.selfSigned, err = servingCert(o.certFile, o.keyFile); err != nil {
		return nil, err
	}
	s.clientCA, err = dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", authConfigMapNamespace, authConfigMapName, clientCAKey, client)
	if err != nil {
		return nil, fmt.Errorf("client CA of %s/%s: %w", authConfigMapNamespace, authConfigMapName, err)
	}
	authn, err := newAuthenticator(client, s.clientCA, o.public)
	if err != nil {
		return nil, fmt.Errorf("delegated authentication: %w", err)
	}
	authz, err := newAuthorizer(client, o.public)
	if err != nil {
		return nil, fmt.Errorf("delegated authorization: %w", err)
	}
	s.handler = chain(handler, authn, authz)
	if s.ln, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("secureServing.bindAddress %s: %w (choose a free address, or set it empty to serve no HTTPS)", addr, err)
	}
	what := "from secureServing.certFile"
	if s.selfSigned {
		what = "self-signed, made at start (no secureServing.certFile): clients cannot verify it"
	}
	s.log.Info("serving securely", "address", s.Addr(), "certificate", what)
	return s, nil
}

// servingCert loads the certificate files, or makes a self-signed
// certificate when there are none: for the host name, localhost and
// 127.0.0.1, as kube-scheduler makes one for localhost when given none. A
// kubelet's HTTPS probe does not verify it; a scraper must be told to
// trust it, or be given a certificate of the cluster's.
func servingCert(certFile, keyFile string) (_ dynamiccertificates.CertKeyContentProvider, selfSigned bool, _ error) {
	switch {
	case certFile != "" && keyFile != "":
		for _, f := range []struct{ key, path string }{{"secureServing.certFile", certFile}, {"secureServing.keyFile", keyFile}} {
			if _, err := os.Stat(f.path); err != nil {
				return nil, false, fmt.Errorf("%s: %w", f.key, err)
			}
		}
		c, err := dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", certFile, keyFile)
		if err != nil {
			return nil, false, fmt.Errorf("secureServing.certFile %s and secureServing.keyFile %s: %w (want a PEM certificate and its PEM private key)", certFile, keyFile, err)
		}
		return c, false, nil
	case certFile != "" || keyFile != "":
		return nil, false, fmt.Errorf("secureServing.certFile %q and secureServing.keyFile %q: set both or neither", certFile, keyFile)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return nil, false, fmt.Errorf("make a self-signed serving certificate: %w", err)
	}
	c, err := dynamiccertificates.NewStaticCertKeyContent("self-signed", certPEM, keyPEM)
	if err != nil {
		return nil, false, fmt.Errorf("make a self-signed serving certificate: %w", err)
	}
	return c, true, nil
}

// newAuthenticator authenticates client certificates against the API
// server's client CA, then bearer tokens by TokenReview; a request with
// neither is anonymous on the public paths only, and refused (401)
// elsewhere.
func newAuthenticator(client kubernetes.Interface, clientCA dynamiccertificates.CAContentProvider, public []string) (authenticator.Request, error) {
	cfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		TokenAccessReviewClient:            client.AuthenticationV1(),
		TokenAccessReviewTimeout:           tokenReviewTimeout,
		WebhookRetryBackoff:                webhookRetryBackoff(),
		CacheTTL:                           tokenCacheTTL,
		ClientCertificateCAContentProvider: clientCA,
	}
	// Conditions empty would make every path anonymous: only with paths.
	if len(public) > 0 {
		cfg.Anonymous = &apiserver.AnonymousAuthConfig{Enabled: true}
		for _, p := range public {
			cfg.Anonymous.Conditions = append(cfg.Anonymous.Conditions, apiserver.AnonymousAuthCondition{Path: p})
		}
	}
	authn, _, err := cfg.New()
	return authn, err
}

// newAuthorizer allows system:masters and the public paths, and asks the
// API server (SubjectAccessReview) about everything else.
func newAuthorizer(client kubernetes.Interface, public []string) (authorizer.Authorizer, error) {
	// Upstream's names, which SubjectAccessReview-style reasons quote.
	authorizers := []union.NamedAuthorizer{{
		AuthorizerName: "kubernetes.io/always-allow-groups",
		Authorizer:     authorizerfactory.NewPrivilegedGroups(privilegedGroup),
	}}
	if len(public) > 0 {
		a, err := path.NewAuthorizer(public)
		if err != nil {
			return nil, err
		}
		authorizers = append(authorizers, union.NamedAuthorizer{AuthorizerName: "kubernetes.io/always-allow-paths", Authorizer: a})
	}
	sar, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       webhookRetryBackoff(),
	}.New()
	if err != nil {
		return nil, err
	}
	return union.New(append(authorizers, union.NamedAuthorizer{AuthorizerName: "kubernetes.io/webhook", Authorizer: sar})...)
}

// chain wraps handler in upstream's filters (kube-scheduler's
// buildHandlerChain), innermost first: authorization, authentication (401
// for a request it cannot authenticate), the request's attributes (every
// path is a non-resource URL, its verb the method in lower case), no
// caching of answers, and a recovered panic answering 500.
func chain(handler http.Handler, authn authenticator.Request, authz authorizer.Authorizer) http.Handler {
	resolver := &apirequest.RequestInfoFactory{}
	h := genericfilters.WithAuthorization(handler, authz, scheme.Codecs)
	h = genericfilters.WithAuthentication(h, authn, genericfilters.Unauthorized(scheme.Codecs), nil, nil)
	h = genericfilters.WithRequestInfo(h, resolver)
	h = genericfilters.WithCacheControl(h)
	return serverfilters.WithPanicRecovery(h, resolver)
}

// Addr is the address the listener is bound to.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close closes the listener; Serve does so when it returns. It may be
// called more than once.
func (s *Server) Close() { s.closeOnce.Do(func() { _ = s.ln.Close() }) }

// Serve serves HTTPS until ctx ends, then shuts the server down (waiting
// up to 5 s for requests in flight) and returns. The client CA follows
// the ConfigMap, and certificate files are reloaded when they change,
// while it serves.
func (s *Server) Serve(ctx context.Context) error {
	defer s.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // before wg.Wait: the goroutines below end with ctx

	base := &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		// Ask for a certificate without requiring one: the authenticator
		// verifies it against the client CA, and a token works as well.
		ClientAuth: tls.RequestClientCert,
	}
	// The controller clones base on every change, on its own goroutine;
	// the server gets a copy of its own, which ServeTLS may modify (its
	// HTTP/2 set-up), and which hands each connection the controller's
	// current config.
	certs := dynamiccertificates.NewDynamicServingCertificateController(base, s.clientCA, s.cert, nil, nil)
	tlsConfig := base.Clone()
	tlsConfig.GetConfigForClient = certs.GetConfigForClient
	s.clientCA.AddListener(certs)
	s.cert.AddListener(certs)
	if r, ok := s.cert.(dynamiccertificates.ControllerRunner); ok {
		wg.Go(func() { r.Run(ctx, 1) })
	}
	wg.Go(func() { s.clientCA.Run(ctx, 1) })
	if err := certs.RunOnce(); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	wg.Go(func() { certs.Run(1, ctx.Done()) })

	srv := &http.Server{
		Handler:           s.handler,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug), // TLS handshake errors of scanners and probes
	}
	wg.Go(func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	})
	if err := srv.ServeTLS(s.ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTPS on %s: %w", s.Addr(), err)
	}
	return nil
}
