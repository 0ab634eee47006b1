package app

import (
	"io"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// probePaths answer without credentials on the secure listener: a
// kubelet's probe has none.
var probePaths = []string{"/healthz", "/livez", "/readyz"}

// mux routes a listener's endpoints: /metrics of reg, the probes, the
// policy routes (swapper.register; the module upload only with upload)
// and, with profiling, net/http/pprof.
func (a *App) mux(reg *prometheus.Registry, profiling, upload bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	// The process serves: live. Upstream's /healthz and /livez answer alike.
	live := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }
	mux.HandleFunc("GET /healthz", live)
	mux.HandleFunc("GET /livez", live)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.ready.Load() {
			http.Error(w, "informers not synced yet", http.StatusServiceUnavailable)
			return
		}
		// Open breakers do not make the scheduler unready (it schedules on
		// the native defaults), but they are reported.
		for _, line := range a.swap.readyDetail() {
			_, _ = io.WriteString(w, "[!] "+line+"\n")
		}
		_, _ = io.WriteString(w, "ok")
	})
	a.swap.register(mux, upload)
	if profiling {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}
