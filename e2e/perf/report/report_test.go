package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sampleReport() *Report {
	var soak []SoakSample
	soak = append(soak, soakSeries(Upstream, "scale", []float64{40, 45, 46, 46, 47, 46, 46, 47, 46})...)
	soak = append(soak, soakSeries(Wasm, "scale", []float64{30, 32, 33, 33, 33, 34, 33, 34, 33})...)
	soak = append(soak, soakSeries(Wasm, "affinity", []float64{33, 34, 36, 40, 44, 48, 52, 56, 60}, 0, 0, 0, 0, 1)...)
	return &Report{
		Title:       "wasmsched vs kube-scheduler",
		Started:     time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		CommandLine: "go run ./e2e/perf -rounds 3 -out results/",
		Machine:     "2 cores, 24 GiB, linux/amd64, Test CPU",
		Versions:    map[string]string{"kube-scheduler": "v1.37.1", "kube-apiserver": "v1.37.1"},
		Workloads: []Workload{
			{Name: "SchedulingBasic", Description: "500 nodes, 1000 pods | no constraints"},
			{Name: "Other", Description: "in-memory policy loop", InMemory: true},
			{Name: "NeverRan", Description: "only failed runs"},
		},
		Runs: append(sampleRuns(),
			Run{Workload: "NeverRan", Scheduler: Wasm, Round: 1, Err: "apiserver\ndown"},
			// The ceiling binds 100 pods/s at 5 ms each, no latency: wasm
			// (50 pods/s, 10 ms) reaches half of it.
			Run{Workload: "SchedulingBasic", Scheduler: Ceiling, Round: 1, Pods: 100, Elapsed: time.Second,
				Throughput: []float64{100}, Latency: Quantiles{math.NaN(), math.NaN(), math.NaN()}, CPUSeconds: 0.5, ControlPlaneCPUSeconds: 0.5, PeakRSS: 40 * mebi}),
		Soak:  soak,
		Notes: []string{"Numbers from a shared CI runner."},
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"# wasmsched vs kube-scheduler\n",
		"- Date: 2026-03-04 05:06:07 UTC\n",
		"- Machine: 2 cores, 24 GiB, linux/amd64, Test CPU\n",
		"- Versions: kube-apiserver v1.37.1, kube-scheduler v1.37.1\n",
		"```sh\ngo run ./e2e/perf -rounds 3 -out results/\n```",
		"| SchedulingBasic | 500 nodes, 1000 pods \\| no constraints | upstream, native, wasm, ceiling |\n",
		"| NeverRan | only failed runs | wasm |\n",
		"| Other | in-memory policy loop | native, wasm (in memory, no upstream) |\n",
		// Results: hand-computed in TestSummarise; the control plane's
		// CPU per pod right after the scheduler's.
		"| CPU s/run | CPU ms/pod | Control plane CPU ms/pod | Attempts/pod |",
		"Control plane CPU: user+system of kube-apiserver + etcd during the measured phase / measured pods bound",
		"| SchedulingBasic | upstream | 25.0 | 20.0 | 40.0 | 40.0 | 20.0 | 2.00 | 3.00 | 6.00 | 1.00 | 20.000 | 40.000 | 1.50 | 120.0 | 2 + 1 failed |\n",
		"| SchedulingBasic | wasm | 50.0 | 50.0 | 70.0 | 70.0 | 50.0 | 1.00 | 2.00 | 3.00 | 1.00 | 10.000 | 20.000 | — | 90.0 | 2 |\n",
		"| NeverRan | wasm | — | — | — | — | — | — | — | — | — | — | — | — | — | 0 + 1 failed |\n",
		"| SchedulingBasic | ceiling | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | — | — | — | 0.50 | 5.000 | 5.000 | — | 40.0 | 1 |\n",
		// In memory: no control plane, a dash rather than 0.
		"| Other | native | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 1.00 | 1.00 | 1.00 | 0.20 | 2.000 | — | — | 50.0 | 1 |\n",
		// Ratios with targets, wasm/ceiling beside wasm/upstream.
		"| SchedulingBasic | 3.000 | 2.500 ✓ (≥ 1.20) | 0.500 ✗ (≥ 1.00) | 0.833 ✗ (≥ 0.95) | 2.000 | 2.000 | 0.500 | 1.000 |\n",
		"| Other | n/a | n/a (≥ 1.00) | n/a | 0.960 ✓ (≥ 0.95) | — | — | — | 0.960 |\n",
		// Soak: wasm affinity grows 12 MiB (44 -> 56) and leaves an inflight event.
		"| upstream | scale | 9 | 40.0 | 46.0 | 46.0 | 46.0 | +0.0 | yes ✓ | 0 | yes ✓ |\n",
		"| wasm | affinity | 9 | 33.0 | 60.0 | 44.0 | 56.0 | +12.0 | no ✗ | 1 | no ✗ |\n",
		"![Throughput SchedulingBasic](throughput-SchedulingBasic.png)",
		"![Throughput Other](throughput-Other.png)",
		"![Memory soak](soak.png)",
		"| Latency p99 ms | CPU s | Control plane CPU s | Attempts |",
		"| SchedulingBasic | 1 | upstream | 60 | 3.0 | 20.0 | 4.00 | 1.50 | 3.00 | 90 | 100.0 |  |\n",
		"| SchedulingBasic | 3 | upstream | 5 | 1.0 | 1000.0 | 9000.00 | 99.00 | 99.00 | 9999 | 999.0 | timeout after 10m |\n",
		"| Other | 1 | wasm | 96 | 1.0 | 96.0 | 1.00 | 0.20 | — | — | 60.0 |  |\n",
		"| NeverRan | 1 | wasm | 0 | 0.0 | — | 0.00 | 0.00 | — | — | 0.0 | apiserver down |\n",
		"- SchedulingBasic: wasm/native throughput 0.833 < 0.95\n",
		"- SchedulingBasic: wasm/ceiling throughput 0.500 < 1.00\n",
		"- Targets: 6 missed or failed (see below)\n",
		"## Notes\n\n- Numbers from a shared CI runner.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "throughput-NeverRan.png") {
		t.Error("markdown links a plot for a workload without successful runs")
	}
	if t.Failed() {
		t.Logf("markdown:\n%s", md)
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().Text(&b); err != nil {
		t.Fatal(err)
	}
	txt := b.String()
	for _, want := range []string{
		"wasmsched vs kube-scheduler  (2026-03-04 05:06:07 UTC",
		"20.000", // upstream CPU ms/pod
		"cp ms/pod",
		"40.000", // upstream control-plane CPU ms/pod
		"0.833 ✗ (>= 0.95)",
		"2.500 ✓ (>= 1.20)",
		"0.500 ✗ (>= 1.00)", // wasm/ceiling
		"thr w/c",
		"SchedulingBasic round 3 upstream failed: timeout after 10m",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	var ok bytes.Buffer
	if err := (&Report{Runs: sampleRuns()[:1]}).Text(&ok); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ok.String(), "all checked targets met") {
		t.Errorf("report without checks should say all met:\n%s", ok.String())
	}
}

func countColor(img image.Image, area image.Rectangle, c color.RGBA) int {
	n := 0
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == c {
				n++
			}
		}
	}
	return n
}

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, PlotWidth, PlotHeight) {
		t.Fatalf("PNG bounds %v, want %dx%d", got, PlotWidth, PlotHeight)
	}
	return img
}

func TestPlotThroughput(t *testing.T) {
	var b bytes.Buffer
	if err := PlotThroughput(&b, "SchedulingBasic", sampleRuns()); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b.Bytes())
	for _, s := range []string{Upstream, Native, Wasm} {
		if n := countColor(img, throughputArea, SchedulerColor(s)); n < 50 {
			t.Errorf("%s colour: %d pixels in the plot area, want >= 50", s, n)
		}
	}
	// The second rounds are drawn lighter.
	if n := countColor(img, throughputArea, lighten(SchedulerColor(Wasm), 0.25)); n < 20 {
		t.Errorf("wasm round 2 colour: %d pixels, want >= 20", n)
	}

	// Only Other's runs: native and wasm present, upstream absent.
	b.Reset()
	if err := PlotThroughput(&b, "Other", sampleRuns()); err != nil {
		t.Fatal(err)
	}
	img = decodePNG(t, b.Bytes())
	if n := countColor(img, throughputArea, SchedulerColor(Upstream)); n != 0 {
		t.Errorf("upstream colour: %d pixels in a plot without upstream runs", n)
	}
	if n := countColor(img, throughputArea, SchedulerColor(Native)); n == 0 {
		t.Error("native colour missing from Other's plot")
	}

	if err := PlotThroughput(&b, "NoSuchWorkload", sampleRuns()); err == nil {
		t.Error("plot of a workload without runs: want an error")
	}
}

func TestPlotSoak(t *testing.T) {
	var b bytes.Buffer
	if err := PlotSoak(&b, sampleReport().Soak); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b.Bytes())
	for _, s := range []string{Upstream, Wasm} {
		if n := countColor(img, soakHeapArea, SchedulerColor(s)); n < 50 {
			t.Errorf("%s colour: %d pixels in the heap panel, want >= 50", s, n)
		}
	}
	// Upstream's all-zero inflight line lies under wasm's; wasm must show.
	if n := countColor(img, soakFlightArea, SchedulerColor(Wasm)); n < 50 {
		t.Errorf("wasm colour: %d pixels in the inflight panel, want >= 50", n)
	}
	if n := countColor(img, soakHeapArea, SchedulerColor(Native)); n != 0 {
		t.Errorf("native colour: %d pixels without native samples", n)
	}
	if err := PlotSoak(&b, nil); err == nil {
		t.Error("soak plot without samples: want an error")
	}
}

func TestLine(t *testing.T) {
	c := newCanvas(20, 20)
	red := color.RGBA{255, 0, 0, 255}
	c.line(c.img.Bounds(), &pen{col: red, width: 1}, 2, 3, 12, 8)
	// A 1-px Bresenham line sets one pixel per step of the major axis.
	if n := countColor(c.img, c.img.Bounds(), red); n != 11 {
		t.Errorf("line (2,3)-(12,8): %d pixels, want 11", n)
	}
	// Each column holds exactly one pixel, within half a pixel of the true line.
	for x := 2; x <= 12; x++ {
		var ys []int
		for y := range 20 {
			if c.img.RGBAAt(x, y) == red {
				ys = append(ys, y)
			}
		}
		ideal := 3 + float64(x-2)*0.5
		if len(ys) != 1 || math.Abs(float64(ys[0])-ideal) > 0.5 {
			t.Errorf("column %d: pixels at %v, want one within 0.5 of %.1f", x, ys, ideal)
		}
	}
	// Dashes: 3 on, 2 off over 10 steps of a horizontal line = 6 pixels.
	c = newCanvas(20, 20)
	c.line(c.img.Bounds(), &pen{col: red, width: 1, dash: []int{3, 2}}, 0, 0, 9, 0)
	if n := countColor(c.img, c.img.Bounds(), red); n != 6 {
		t.Errorf("dashed line: %d pixels, want 6", n)
	}
}

func TestThroughputFile(t *testing.T) {
	if got, want := ThroughputFile("Pod Affinity/5000"), "throughput-Pod_Affinity_5000.png"; got != want {
		t.Errorf("ThroughputFile = %q, want %q", got, want)
	}
}

// TestWriteDirLoad writes into $REPORT_PREVIEW_DIR when set, to look at the output.
func TestWriteDirLoad(t *testing.T) {
	dir := os.Getenv("REPORT_PREVIEW_DIR")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "results")
	}
	r := sampleReport()
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"README.md", "results.json", "soak.png", "throughput-Other.png", "throughput-SchedulingBasic.png"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want, +got):\n%s", diff)
	}

	got, err := Load(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("Load(WriteDir) (-want, +got):\n%s", diff)
	}
	if !math.IsNaN(got.Runs[4].Latency.P99) {
		t.Errorf("NaN latency round trip: got %v", got.Runs[4].Latency)
	}
	// The page re-rendered from results.json is the page written.
	var page bytes.Buffer
	if err := got.Markdown(&page); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if page.String() != string(written) {
		t.Error("README.md differs from the markdown of the loaded report")
	}
	// Stable JSON: writing again yields the same bytes.
	first, _ := os.ReadFile(filepath.Join(dir, JSONFile))
	if err := WriteDir(dir, got); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(dir, JSONFile))
	if !bytes.Equal(first, second) {
		t.Error("results.json changed on rewrite")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("Load of a missing file: want an error")
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil {
		t.Error("Load of invalid JSON: want an error")
	}
}

// TestLoadOlderReport: a results.json written before the control plane's
// CPU was measured loads with it 0, and the page shows a dash for it, not 0.
func TestLoadOlderReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), JSONFile)
	old := `{"Title": "old", "Runs": [{"Workload": "SchedulingBasic", "Scheduler": "wasm", "Round": 1, "Pods": 100,
		"Elapsed": 2000000000, "Throughput": [50, 50], "Latency": {"P50": 0.001, "P90": 0.002, "P99": 0.003},
		"CPUSeconds": 1, "PeakRSS": 83886080, "Err": ""}]}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Runs[0].ControlPlaneCPUSeconds; got != 0 {
		t.Errorf("ControlPlaneCPUSeconds of an older report = %v, want 0", got)
	}
	if got := r.Summaries()[0].ControlPlaneMsPerPod; !math.IsNaN(got) {
		t.Errorf("ControlPlaneMsPerPod of an older report = %v, want NaN", got)
	}
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| SchedulingBasic | wasm | 50.0 | 50.0 | 50.0 | 50.0 | 50.0 | 1.00 | 2.00 | 3.00 | 1.00 | 10.000 | — | — | 80.0 | 1 |\n",
		"| SchedulingBasic | 1 | wasm | 100 | 2.0 | 50.0 | 3.00 | 1.00 | — | — | 80.0 |  |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	// An unmeasured run is written without the field, as older reports were.
	var js bytes.Buffer
	if err := r.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js.String(), "ControlPlaneCPUSeconds") {
		t.Errorf("results.json names ControlPlaneCPUSeconds for a run without it:\n%s", js.String())
	}
}
