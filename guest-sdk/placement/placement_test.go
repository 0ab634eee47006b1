package placement_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/placement"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

func labels(kv ...string) abi.KVList {
	n := policytest.MakeNode()
	for i := 0; i < len(kv); i += 2 {
		n.Label(kv[i], kv[i+1])
	}
	return n.View().Labels()
}

func TestLabels(t *testing.T) {
	l := labels("zone", "a", "tier", "gold", "empty", "", "cores", "12")
	none := labels()
	cases := []struct {
		name      string
		got, want bool
	}{
		{"Has", placement.Has(l, "zone"), true},
		{"Has an empty value", placement.Has(l, "empty"), true},
		{"Has absent", placement.Has(l, "rack"), false},
		{"Has on none", placement.Has(none, "zone"), false},
		{"Equals", placement.Equals(l, "zone", "a"), true},
		{"Equals other value", placement.Equals(l, "zone", "b"), false},
		{"Equals absent with empty value", placement.Equals(l, "rack", ""), false},
		{"Equals an empty value", placement.Equals(l, "empty", ""), true},
		{"In", placement.In(l, "tier", "silver", "gold"), true},
		{"In none of", placement.In(l, "tier", "silver"), false},
		{"In no values", placement.In(l, "tier"), false},
		{"In absent", placement.In(l, "rack", ""), false},
		{"Subset", placement.Subset(l, labels("zone", "a", "tier", "gold")), true},
		{"Subset empty", placement.Subset(l, none), true},
		{"Subset value differs", placement.Subset(l, labels("zone", "a", "tier", "silver")), false},
		{"Subset key absent", placement.Subset(none, labels("zone", "a")), false},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestSelector(t *testing.T) {
	l := labels("zone", "a", "cores", "12", "neg", "-3", "word", "x")
	req := func(key string, op abi.SelectorOperator, values ...string) placement.Requirement {
		return placement.Requirement{Key: key, Operator: op, Values: values}
	}
	cases := []struct {
		name string
		req  placement.Requirement
		want bool
	}{
		{"In", req("zone", abi.SelectorIn, "b", "a"), true},
		{"In other", req("zone", abi.SelectorIn, "b"), false},
		{"In absent", req("rack", abi.SelectorIn, "a"), false},
		{"NotIn", req("zone", abi.SelectorNotIn, "b"), true},
		{"NotIn listed", req("zone", abi.SelectorNotIn, "a"), false},
		{"NotIn absent", req("rack", abi.SelectorNotIn, "a"), true},
		{"Exists", req("zone", abi.SelectorExists), true},
		{"Exists absent", req("rack", abi.SelectorExists), false},
		{"DoesNotExist", req("rack", abi.SelectorDoesNotExist), true},
		{"DoesNotExist present", req("zone", abi.SelectorDoesNotExist), false},
		{"Gt", req("cores", abi.SelectorGt, "8"), true},
		{"Gt equal", req("cores", abi.SelectorGt, "12"), false},
		{"Gt negative", req("neg", abi.SelectorGt, "-4"), true},
		{"Lt", req("cores", abi.SelectorLt, "16"), true},
		{"Lt equal", req("cores", abi.SelectorLt, "12"), false},
		{"Gt not a number", req("word", abi.SelectorGt, "1"), false},
		{"Gt bound not a number", req("cores", abi.SelectorGt, "x"), false},
		{"Gt two values", req("cores", abi.SelectorGt, "1", "2"), false},
		{"Gt absent", req("rack", abi.SelectorGt, "1"), false},
		{"Gt overflow", req("cores", abi.SelectorGt, "99999999999999999999"), false},
		{"Gt min int64", req("cores", abi.SelectorGt, "-9223372036854775808"), true},
		{"unknown", req("zone", abi.SelectorUnknown, "a"), false},
	}
	for _, c := range cases {
		if got := c.req.Matches(l); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
	}
	sel := placement.Selector{req("zone", abi.SelectorIn, "a"), req("cores", abi.SelectorGt, "4")}
	if !sel.Matches(l) || (placement.Selector{req("zone", abi.SelectorIn, "a"), req("rack", abi.SelectorExists)}).Matches(l) {
		t.Error("Selector does not AND its requirements")
	}
	if !(placement.Selector{}).Matches(labels()) {
		t.Error("the empty selector does not match")
	}
	if allocs := testing.AllocsPerRun(100, func() { sel.Matches(l) }); allocs != 0 {
		t.Errorf("Selector.Matches allocates %v times, want 0", allocs)
	}
}

func TestTolerates(t *testing.T) {
	taint := abi.Taint{Key: "dedicated", Value: "gpu", Effect: abi.EffectNoSchedule}
	num := abi.Taint{Key: "level", Value: "5", Effect: abi.EffectNoSchedule}
	tol := func(key, value string, op abi.TolerationOperator, effect abi.TaintEffect) abi.Toleration {
		return abi.Toleration{Key: key, Value: value, Operator: op, Effect: effect}
	}
	cases := []struct {
		name  string
		tol   abi.Toleration
		taint abi.Taint
		want  bool
	}{
		{"Equal", tol("dedicated", "gpu", abi.TolerationEqual, abi.EffectNoSchedule), taint, true},
		{"Equal other value", tol("dedicated", "cpu", abi.TolerationEqual, abi.EffectNoSchedule), taint, false},
		{"Equal any effect", tol("dedicated", "gpu", abi.TolerationEqual, abi.EffectNone), taint, true},
		{"Equal other effect", tol("dedicated", "gpu", abi.TolerationEqual, abi.EffectNoExecute), taint, false},
		{"Exists", tol("dedicated", "", abi.TolerationExists, abi.EffectNoSchedule), taint, true},
		{"Exists other key", tol("other", "", abi.TolerationExists, abi.EffectNone), taint, false},
		{"Exists without a key tolerates everything", tol("", "", abi.TolerationExists, abi.EffectNone), taint, true},
		{"Exists without a key, other effect", tol("", "", abi.TolerationExists, abi.EffectNoExecute), taint, false},
		{"unknown effect", tol("dedicated", "gpu", abi.TolerationEqual, abi.EffectUnknown), abi.Taint{Key: "dedicated", Value: "gpu", Effect: abi.EffectUnknown}, false},
		{"unknown operator", tol("dedicated", "gpu", abi.TolerationUnknown, abi.EffectNone), taint, false},
		{"Lt", tol("level", "7", abi.TolerationLt, abi.EffectNone), num, true},
		{"Lt equal", tol("level", "5", abi.TolerationLt, abi.EffectNone), num, false},
		{"Gt", tol("level", "3", abi.TolerationGt, abi.EffectNone), num, true},
		{"Gt negative bound", tol("level", "-3", abi.TolerationGt, abi.EffectNone), num, true},
		{"Gt not canonical", tol("level", "03", abi.TolerationGt, abi.EffectNone), num, false},
		{"Gt minus zero", tol("level", "-0", abi.TolerationGt, abi.EffectNone), num, false},
		{"Gt plus sign", tol("level", "+3", abi.TolerationGt, abi.EffectNone), num, false},
		{"Gt taint not a number", tol("dedicated", "3", abi.TolerationGt, abi.EffectNone), taint, false},
	}
	for _, c := range cases {
		if got := placement.Tolerates(c.tol, c.taint); got != c.want {
			t.Errorf("%s: Tolerates = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestUntoleratedTaint(t *testing.T) {
	node := policytest.MakeNode().Name("n").
		Taint("soft", "", abi.EffectPreferNoSchedule).
		Taint("dedicated", "gpu", abi.EffectNoSchedule).
		Taint("evict", "", abi.EffectNoExecute).View()
	cases := []struct {
		name    string
		pod     *policytest.PodWrapper
		want    abi.Taint
		wantAny bool
		soft    int
	}{
		{"no tolerations", policytest.MakePod(), abi.Taint{Key: "dedicated", Value: "gpu", Effect: abi.EffectNoSchedule}, true, 1},
		{"one tolerated", policytest.MakePod().Toleration("dedicated", "gpu", abi.TolerationEqual, abi.EffectNoSchedule),
			abi.Taint{Key: "evict", Effect: abi.EffectNoExecute}, true, 1},
		{"all tolerated", policytest.MakePod().Toleration("dedicated", "", abi.TolerationExists, abi.EffectNone).
			Toleration("evict", "", abi.TolerationExists, abi.EffectNoExecute), abi.Taint{}, false, 1},
		{"everything tolerated", policytest.MakePod().Toleration("", "", abi.TolerationExists, abi.EffectNone), abi.Taint{}, false, 0},
	}
	for _, c := range cases {
		got, ok := placement.UntoleratedTaint(c.pod.View(), node)
		if got != c.want || ok != c.wantAny {
			t.Errorf("%s: UntoleratedTaint = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.wantAny)
		}
		if n := placement.CountUntolerated(c.pod.View(), node, abi.EffectPreferNoSchedule); n != c.soft {
			t.Errorf("%s: CountUntolerated(PreferNoSchedule) = %d, want %d", c.name, n, c.soft)
		}
	}
}

func TestResources(t *testing.T) {
	node := policytest.MakeNode().Allocatable("cpu", 4000).Allocatable("memory", 8<<30).Allocatable("pods", 10).
		Requested("cpu", 3000).Requested("memory", 9<<30).Requested("pods", 9).View()
	pod := policytest.MakePod().Request("cpu", 500).Request("pods", 1).View()
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"Request", placement.Request(pod, "cpu"), 500},
		{"Request none", placement.Request(pod, "memory"), 0},
		{"Free", placement.Free(node, "cpu"), 1000},
		{"Free overcommitted", placement.Free(node, "memory"), -1 << 30},
		{"Free unlisted", placement.Free(node, "example.com/gpu"), 0},
		{"FreeAfter", placement.FreeAfter(pod, node, "cpu"), 500},
		{"FreeAfter pods", placement.FreeAfter(pod, node, "pods"), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		pod  *policytest.PodWrapper
		want bool
	}{
		{"fits", policytest.MakePod().Request("cpu", 1000).Request("pods", 1), true},
		{"cpu over", policytest.MakePod().Request("cpu", 1001), false},
		{"pods full", policytest.MakePod().Request("pods", 2), false},
		{"memory overcommitted", policytest.MakePod().Request("memory", 1), false},
		{"a zero request fits anywhere", policytest.MakePod().Request("memory", 0), true},
		{"a resource the node lacks", policytest.MakePod().Request("example.com/gpu", 1), false},
		{"no requests", policytest.MakePod(), true},
	} {
		if got := placement.Fits(c.pod.View(), node); got != c.want {
			t.Errorf("Fits(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}
