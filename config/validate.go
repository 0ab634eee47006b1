package config

import (
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The checks of one key's value, after conversion to its kind; each error
// says what was wrong and what is allowed, and the caller adds the key.

func intRange(lo, hi int64) func(int64) error {
	return func(n int64) error {
		if n < lo || n > hi {
			return fmt.Errorf("%d is out of range: allowed %d to %d", n, lo, hi)
		}
		return nil
	}
}

// floatAbove allows more than lo, up to hi.
func floatAbove(lo, hi float64) func(float64) error {
	return func(f float64) error {
		if f <= lo || f > hi {
			return fmt.Errorf("%s is out of range: allowed more than %s, up to %s", fmtFloat(f), fmtFloat(lo), fmtFloat(hi))
		}
		return nil
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func durationRange(lo, hi time.Duration) func(time.Duration) error {
	return func(d time.Duration) error {
		if d < lo || d > hi {
			return fmt.Errorf("%v is out of range: allowed %v to %v", d, lo, hi)
		}
		return nil
	}
}

func checkSHA256(s string) error {
	if s == "" {
		return nil
	}
	if b, err := hex.DecodeString(s); err != nil || len(b) != 32 || strings.ToLower(s) != s {
		return fmt.Errorf("%q is not a sha256: want 64 lowercase hex digits (sha256sum FILE prints it)", s)
	}
	return nil
}

// dnsName checks a name as Kubernetes checks a name of its kind:
// validation.IsDNS1123Subdomain or IsDNS1123Label.
func dnsName(what string, is func(string) []string) func(string) error {
	return func(s string) error {
		if s == "" {
			return fmt.Errorf("empty: set a %s", what)
		}
		if msgs := is(s); len(msgs) > 0 {
			return fmt.Errorf("%q is not a valid %s: %s", s, what, strings.Join(msgs, "; "))
		}
		return nil
	}
}

var checkSchedulerName = dnsName("scheduler name (pods name it in spec.schedulerName)", validation.IsDNS1123Subdomain)

// hostPort allows "" (disabled) or host:port with a numeric port and a host
// that is empty (every interface), an IP address or a host name; port is
// the example in the error.
func hostPort(port string) func(string) error {
	allowed := fmt.Sprintf("write it like 127.0.0.1:%[1]s, 0.0.0.0:%[1]s, [::]:%[1]s or :%[1]s, or leave it empty to disable the listener", port)
	return func(s string) error {
		if s == "" {
			return nil
		}
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			return fmt.Errorf("%q is not host:port: %s", s, allowed)
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return fmt.Errorf("%q: port %q is not a number from 0 to 65535: %s", s, port, allowed)
		}
		if host != "" && net.ParseIP(host) == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
			return fmt.Errorf("%q: host %q is neither an IP address nor a host name: %s", s, host, allowed)
		}
		return nil
	}
}

// The content types the API server speaks to client-go.
const (
	jsonContentType     = "application/json"
	protobufContentType = "application/vnd.kubernetes.protobuf"
)

func checkContentType(s string) error {
	if s != "" && s != jsonContentType && s != protobufContentType {
		return fmt.Errorf("%q: want %s or %s (or empty for client-go's default)", s, jsonContentType, protobufContentType)
	}
	return nil
}

// checkAcceptContentTypes allows a comma-separated list of the content
// types, each optionally with parameters (;q=0.9).
func checkAcceptContentTypes(s string) error {
	if s == "" {
		return nil
	}
	for _, t := range strings.Split(s, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(t), ";")
		if err := checkContentType(strings.TrimSpace(mt)); err != nil || mt == "" {
			return fmt.Errorf("%q: %q is not a content type the API server serves: want %s and/or %s, separated by commas", s, t, jsonContentType, protobufContentType)
		}
	}
	return nil
}

// leaderElectionJitter is client-go's leaderelection.JitterFactor: a
// renewDeadline must exceed retryPeriod times it.
const leaderElectionJitter = 1.2

// crossChecks are the checks that involve more than one key; each error
// names every key involved.
func crossChecks(c *Config) []error {
	var errs []error
	if c.Sandbox.WatchdogTick*2 > c.Sandbox.Deadline {
		errs = append(errs, fmt.Errorf("sandbox.watchdogTick: %v is more than half of sandbox.deadline (%v): a call could overrun its deadline by more than the deadline itself; lower the tick or raise the deadline",
			c.Sandbox.WatchdogTick, c.Sandbox.Deadline))
	}
	if q := c.Queue; q.MaxBackoff < q.InitialBackoff {
		errs = append(errs, fmt.Errorf("queue.maxBackoff: %v is less than queue.initialBackoff (%v): set queue.maxBackoff to at least queue.initialBackoff",
			q.MaxBackoff, q.InitialBackoff))
	}
	if c.AdminEndpoint && !isLoopback(c.Metrics.BindAddress) {
		errs = append(errs, fmt.Errorf("policies.adminEndpoint: the endpoint that swaps policy modules has no authentication, and metrics.bindAddress %q is not a loopback address, so any pod that can reach it could change scheduling policy; "+
			"set metrics.bindAddress to 127.0.0.1:PORT (and use kubectl port-forward to reach it) or turn policies.adminEndpoint off",
			c.Metrics.BindAddress))
	}
	if ss := c.SecureServing; (ss.CertFile == "") != (ss.KeyFile == "") {
		errs = append(errs, fmt.Errorf("secureServing.certFile %q and secureServing.keyFile %q: set both (a PEM certificate and its private key) or neither (a self-signed certificate)",
			ss.CertFile, ss.KeyFile))
	}
	// As client-go's leaderelection.NewLeaderElector.
	le := c.LeaderElection
	if le.LeaseDuration <= le.RenewDeadline {
		errs = append(errs, fmt.Errorf("leaderElection.leaseDuration: %v is not more than leaderElection.renewDeadline (%v): "+
			"a leader must give up before its Lease can pass to another replica; raise leaderElection.leaseDuration or lower leaderElection.renewDeadline",
			le.LeaseDuration, le.RenewDeadline))
	}
	if minRenew := time.Duration(leaderElectionJitter * float64(le.RetryPeriod)); le.RenewDeadline <= minRenew {
		errs = append(errs, fmt.Errorf("leaderElection.renewDeadline: %v is not more than %v x leaderElection.retryPeriod (%v x %v = %v): "+
			"the leader needs room for a jittered retry before its deadline; raise leaderElection.renewDeadline or lower leaderElection.retryPeriod",
			le.RenewDeadline, leaderElectionJitter, leaderElectionJitter, le.RetryPeriod, minRenew))
	}
	return errs
}

// isLoopback reports whether a host:port listens on loopback only:
// localhost or a loopback IP, not an empty host (every interface).
func isLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
