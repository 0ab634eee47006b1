package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// page renders reg in the text exposition format, as /metrics serves it.
func page(t *testing.T, reg *prometheus.Registry) []byte {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestHistogramAcrossLabelsAndScrapes(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: attemptDuration, Buckets: []float64{0.001, 0.002, 0.004, 0.008},
	}, []string{"result", "profile"})
	reg.MustRegister(h)
	h.WithLabelValues("scheduled", "perf").Observe(0.0005) // before the measured phase
	first, err := parseMetrics(page(t, reg))
	if err != nil {
		t.Fatal(err)
	}
	// Measured: 2 in (0.001, 0.002], 1 in (0.002, 0.004] on another series,
	// 1 above every bound.
	h.WithLabelValues("scheduled", "perf").Observe(0.0015)
	h.WithLabelValues("scheduled", "perf").Observe(0.0018)
	h.WithLabelValues("unschedulable", "perf").Observe(0.003)
	h.WithLabelValues("scheduled", "perf").Observe(1)
	second, err := parseMetrics(page(t, reg))
	if err != nil {
		t.Fatal(err)
	}
	d := second.histogram(attemptDuration).minus(first.histogram(attemptDuration))
	if got := d.total(); got != 4 {
		t.Fatalf("observations in the measured phase = %v, want 4 (the +Inf bucket counted once, the earlier one subtracted)", got)
	}
	for _, c := range []struct{ q, want float64 }{
		{0.25, 0.0015}, // rank 1 of 2 in (0.001, 0.002]: halfway
		{0.5, 0.002},   // rank 2: the bucket's top
		{0.75, 0.004},  // rank 3: the top of (0.002, 0.004]
		{0.99, 0.008},  // in +Inf: the highest finite bound
	} {
		if got := d.quantile(c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := (histogram{}).quantile(0.5); !math.IsNaN(got) {
		t.Errorf("quantile of nothing = %v, want NaN", got)
	}
}

func TestSeriesSumPicksTheLabel(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: policyCallDuration, Buckets: []float64{0.001}}, []string{"slot"})
	reg.MustRegister(h)
	h.WithLabelValues("queueingHint").Observe(0.25)
	h.WithLabelValues("queueingHint").Observe(0.5)
	h.WithLabelValues("victimOrder").Observe(4)
	s, err := parseMetrics(page(t, reg))
	if err != nil {
		t.Fatal(err)
	}
	if n, sum := s.seriesSum(policyCallDuration, "slot", "queueingHint"); n != 2 || sum != 0.75 {
		t.Errorf("queueingHint series: %v calls, %vs; want 2, 0.75s", n, sum)
	}
	if n, sum := s.seriesSum("absent", "slot", "queueingHint"); n != 0 || sum != 0 {
		t.Errorf("absent family: %v, %v", n, sum)
	}
}

func TestSumOfGaugeSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: inflightEvents}, []string{"event"})
	reg.MustRegister(g)
	g.WithLabelValues("NodeAdd").Set(3)
	g.WithLabelValues("PodDelete").Set(2)
	m, err := parseMetrics(page(t, reg))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.sum(inflightEvents); got != 5 {
		t.Errorf("sum = %v, want 5", got)
	}
	if got := m.sum("absent"); got != 0 {
		t.Errorf("sum of an absent family = %v, want 0", got)
	}
	if _, err := parseMetrics([]byte("not a metric page {")); err == nil {
		t.Error("a malformed page parsed without error")
	}
}

func TestReadProcOfSelf(t *testing.T) {
	before, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0.0
	for i := range 50_000_000 {
		x += math.Sqrt(float64(i))
	}
	after, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.cpuSeconds <= before.cpuSeconds {
		t.Errorf("cpu %v -> %v after a busy loop (%v): not increasing", before.cpuSeconds, after.cpuSeconds, x > 0)
	}
	if after.peakRSS < 1<<20 {
		t.Errorf("peak RSS %d bytes: implausible for a Go test binary", after.peakRSS)
	}
	if _, err := readProc(1 << 30); err == nil {
		t.Error("readProc of a pid that cannot exist succeeded")
	}
}

func TestCPUSecondsSumsTheProcesses(t *testing.T) {
	if got, err := cpuSeconds(nil); got != 0 || err != nil {
		t.Errorf("cpuSeconds(nil) = %v, %v; want 0, nil", got, err)
	}
	self, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Twice the same process: at least twice what it had used a moment ago.
	got, err := cpuSeconds([]int{os.Getpid(), os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if got < 2*self.cpuSeconds {
		t.Errorf("cpuSeconds(self, self) = %v, want >= 2 × %v", got, self.cpuSeconds)
	}
	if _, err := cpuSeconds([]int{os.Getpid(), 1 << 30}); err == nil {
		t.Error("cpuSeconds with a pid that cannot exist succeeded")
	}
}

func TestRotateAlternatesTheOrder(t *testing.T) {
	s := []string{schedUpstream, schedNative, schedWasm}
	var firsts []string
	for round := 1; round <= 4; round++ {
		r := rotate(s, round)
		if len(r) != 3 {
			t.Fatalf("round %d: %v", round, r)
		}
		firsts = append(firsts, r[0])
	}
	want := []string{schedUpstream, schedNative, schedWasm, schedUpstream}
	for i := range want {
		if firsts[i] != want[i] {
			t.Fatalf("first scheduler of rounds 1-4 = %v, want %v", firsts, want)
		}
	}
}

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"-workloads", "Gang, InMemory", "-schedulers", "wasm", "-rounds", "3", "-settle", "1s"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.workloads) != 2 || o.workloads[1] != inMemory || o.rounds != 3 || len(o.schedulers) != 1 || o.settle != time.Second {
		t.Errorf("parsed %+v", o)
	}
	for _, bad := range [][]string{
		{"-workloads", "Nope"},
		{"-schedulers", "kube"},
		{"-rounds", "0"},
		{"-settle", "-1s"},
		{"extra"},
		{"-schedulers", "althints"},
		{"-schedulers", "althints", "-hints-module", "/nonexistent/hints.wasm"},
	} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNativeArgsSetEverySlot(t *testing.T) {
	args := wasmschedArgs(schedNative)
	n := 0
	for _, a := range args {
		if bytes.HasSuffix([]byte(a), []byte(".module=native")) {
			n++
		}
	}
	if n != 5 {
		t.Errorf("native run sets %d slots to native, want 5: %q", n, args)
	}
	for _, a := range wasmschedArgs(schedWasm) {
		if bytes.HasSuffix([]byte(a), []byte("=native")) {
			t.Errorf("wasm run has %q", a)
		}
	}
}

func TestAltHintsArgs(t *testing.T) {
	mod := filepath.Join(t.TempDir(), "hints.wasm")
	if err := os.WriteFile(mod, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustGetwd(t), mod)
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-schedulers", "wasm,althints", "-hints-module", rel}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// Absolute: wasmsched runs in the control plane's directory.
	if o.hintsModule != mod {
		t.Errorf("hints module %q, want %q", o.hintsModule, mod)
	}
	args := append(wasmschedArgs(schedAltHints), altHintsArgs(o.hintsModule)...)
	if got, want := args[len(args)-1], "policies.queueingHint.module="+mod; got != want || args[len(args)-2] != "-set" {
		t.Errorf("althints args end %q, want -set %q", args[len(args)-2:], want)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// lagging is a running scheduler whose attempts counter is incremented by
// each scrape until it reaches its target, as a binding goroutine counts
// its pod's attempt after the harness saw the pod bound.
type lagging struct {
	running
	t        *testing.T
	reg      *prometheus.Registry
	attempts *prometheus.CounterVec
	left     int // increments still to come, one per scrape
	scrapes  int
}

func (l *lagging) metrics(context.Context) ([]byte, error) {
	l.scrapes++
	p := page(l.t, l.reg)
	if l.left > 0 {
		l.left--
		l.attempts.WithLabelValues("scheduled", "p").Inc()
	}
	return p, nil
}

// TestCountedMetricsWaitsForTheAttempts: the page the harness keeps counts
// the scheduled attempts of every bound pod when they come late, and the
// wait gives up (with the page it has) when they never come.
func TestCountedMetricsWaitsForTheAttempts(t *testing.T) {
	newLagging := func(before, late int) *lagging {
		reg := prometheus.NewRegistry()
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: scheduleAttempts}, []string{"result", "profile"})
		reg.MustRegister(c)
		c.WithLabelValues("scheduled", "p").Add(float64(before))
		c.WithLabelValues("unschedulable", "p").Add(50) // never enough by themselves
		return &lagging{t: t, reg: reg, attempts: c, left: late}
	}
	l := newLagging(10, 3)
	before, err := parseMetrics(page(t, l.reg))
	if err != nil {
		t.Fatal(err)
	}
	l.attempts.WithLabelValues("scheduled", "p").Add(97) // 100 pods bound, 3 attempts still to count
	p, err := countedMetrics(context.Background(), l, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.counterWhere(scheduleAttempts, "result", "scheduled") - before.counterWhere(scheduleAttempts, "result", "scheduled"); got != 100 {
		t.Errorf("scheduled attempts on the kept page: %v, want 100 (after %d scrapes)", got, l.scrapes)
	}

	if testing.Short() {
		return
	}
	never := newLagging(0, 0)
	before, _ = parseMetrics(page(t, never.reg))
	if _, err := countedMetrics(context.Background(), never, before, 1); err != nil {
		t.Fatalf("countedMetrics with attempts that never come: %v, want the last page", err)
	}
	if never.scrapes < 2 {
		t.Errorf("%d scrapes before giving up, want it to have waited", never.scrapes)
	}
}
