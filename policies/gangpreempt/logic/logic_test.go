package logic_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/policies/gangpreempt/logic"
)

// gangpreempt is the module as main.go registers it.
var gangpreempt = policytest.Policy{
	WasmPath:    "../gangpreempt.wasm",
	PreEnqueue:  logic.PreEnqueue,
	VictimOrder: logic.MoreImportant,
}

var t0 = time.Unix(1_700_000_000, 0)

// member is a pod of PodGroup ns/name with minCount and members known pods.
func member(name string, minCount, members int32) *policytest.PodWrapper {
	return policytest.MakePod().Namespace("ns").Name("p").UID("uid-p").Priority(10).
		Group(name, minCount).GroupMembers(members).GroupPriority(10)
}

func waiting(reason string) abi.Gate {
	return abi.Gate{Code: abi.GateWait, Plugin: abi.PluginGangScheduling, Reason: reason}
}

var admit = abi.Gate{Code: abi.GateAdmit}

func TestPreEnqueue(t *testing.T) {
	policytest.Run(t, gangpreempt, func(t *testing.T, s policytest.Slots) {
		cases := []struct {
			name string
			pod  *policytest.PodWrapper
			want abi.Gate
		}{
			{
				name: "a pod of no group is admitted",
				pod:  policytest.MakePod().Namespace("ns").Name("web").Priority(5),
				want: admit,
			},
			{
				name: "no group name: stray group fields are ignored",
				pod:  policytest.MakePod().Namespace("ns").Name("web").GroupMembers(1).GroupPriority(3),
				want: admit,
			},
			{
				name: "gang of minCount 4 with 3 pods is held",
				pod:  member("train", 4, 3),
				want: waiting(`waiting for pod group "ns/train" to reach its minCount: 3 of 4 pods exist`),
			},
			{
				name: "gang of minCount 4 with 4 pods is admitted",
				pod:  member("train", 4, 4),
				want: admit,
			},
			{
				name: "gang of minCount 4 with 5 pods is admitted",
				pod:  member("train", 4, 5),
				want: admit,
			},
			{
				name: "gang of minCount 1: the pod itself is the quorum",
				pod:  member("solo", 1, 1),
				want: admit,
			},
			{
				name: "no pods counted yet",
				pod:  member("train", 2, 0),
				want: waiting(`waiting for pod group "ns/train" to reach its minCount: 0 of 2 pods exist`),
			},
			{
				name: "PodGroup not seen yet (minCount 0): held until it appears",
				pod:  member("train", 0, 7),
				want: waiting(`waiting for pod group "ns/train" to appear: the scheduler has not seen the PodGroup object`),
			},
			{
				name: "negative minCount compares as upstream: admitted",
				pod:  member("train", -1, 0),
				want: admit,
			},
			{
				name: "largest minCount",
				pod:  member("train", math.MaxInt32, math.MaxInt32-1),
				want: waiting(`waiting for pod group "ns/train" to reach its minCount: 2147483646 of 2147483647 pods exist`),
			},
			{
				name: "disruption mode and priorities do not matter",
				pod:  member("train", 3, 2).GroupDisruption(abi.DisruptionAll).GroupPriority(-7).Priority(1 << 30),
				want: waiting(`waiting for pod group "ns/train" to reach its minCount: 2 of 3 pods exist`),
			},
			{
				name: "no namespace: the group's name alone",
				pod:  member("train", 4, 1).Namespace(""),
				want: waiting(`waiting for pod group "train" to reach its minCount: 1 of 4 pods exist`),
			},
			{
				name: "quotes and newlines in the name are escaped",
				pod:  member("a\"b\nc", 2, 1),
				want: waiting(`waiting for pod group "ns/a\"b\nc" to reach its minCount: 1 of 2 pods exist`),
			},
			{
				name: "invalid UTF-8 in the name is escaped",
				pod:  member("x\xffy", 2, 1),
				want: waiting(`waiting for pod group "ns/x\xffy" to reach its minCount: 1 of 2 pods exist`),
			},
			{
				name: "unicode names stay readable",
				pod:  member("学習", 2, 1),
				want: waiting(`waiting for pod group "ns/学習" to reach its minCount: 1 of 2 pods exist`),
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if diff := cmp.Diff(c.want, s.PreEnqueue.PreEnqueue(c.pod.View())); diff != "" {
					t.Errorf("PreEnqueue (-want, +got):\n%s", diff)
				}
			})
		}

		// A name too long for the reason is cut; the counts survive.
		for kind, name := range map[string]string{
			"ascii":          strings.Repeat("n", 2*abi.MaxReasonLen),
			"two-byte runes": strings.Repeat("é", abi.MaxReasonLen),
			"control bytes":  strings.Repeat("\x01", abi.MaxReasonLen), // each escapes to 4 bytes
			"invalid UTF-8":  strings.Repeat("\xff", abi.MaxReasonLen),
		} {
			t.Run("long name cut: "+kind, func(t *testing.T) {
				for _, pod := range []*policytest.PodWrapper{member(name, 5, 2), member(name, 0, 2)} {
					g := s.PreEnqueue.PreEnqueue(pod.View())
					if g.Code != abi.GateWait || g.Plugin != abi.PluginGangScheduling {
						t.Fatalf("gate %+v, want a wait by %s", g, abi.PluginGangScheduling)
					}
					checkReason(t, g.Reason)
					if !strings.Contains(g.Reason, `..."`) {
						t.Errorf("reason %q does not show that the name was cut", g.Reason)
					}
					if pod.Obj().Group.MinCount != 0 && !strings.HasSuffix(g.Reason, `" to reach its minCount: 2 of 5 pods exist`) {
						t.Errorf("reason %q lost its counts", g.Reason)
					}
				}
			})
		}
	})
}

// checkReason fails t unless reason is one the host accepts.
func checkReason(t *testing.T, reason string) {
	t.Helper()
	if len(reason) > abi.MaxReasonLen {
		t.Errorf("reason of %d bytes, more than abi.MaxReasonLen (%d)", len(reason), abi.MaxReasonLen)
	}
	if !utf8.ValidString(reason) {
		t.Errorf("reason %q is not valid UTF-8", reason)
	}
}

func v(name string, prio int32) *policytest.VictimWrapper {
	return policytest.MakeVictim().Namespace("ns").Name(name).UID("uid-" + name).Priority(prio)
}

func TestVictimOrder(t *testing.T) {
	// withMembers and withKind make victims the builders cannot: a pod that
	// claims members, a kind the ABI does not name.
	withMembers := func(w *policytest.VictimWrapper, n int32) abi.Victim {
		x := w.Obj()
		x.Members = n
		return x
	}
	withKind := func(w *policytest.VictimWrapper, k abi.VictimKind) abi.Victim {
		x := w.Obj()
		x.Kind = k
		return x
	}
	policytest.Run(t, gangpreempt, func(t *testing.T, s policytest.Slots) {
		cases := []struct {
			name    string
			victims []abi.Victim
			want    []string
		}{
			{
				name: "priority beats everything",
				victims: objs(
					v("big-old-group", 1).Group(100).Started(t0),
					v("unstarted-pod", 2),
					v("mid-group", 1).Group(3).Started(t0),
				),
				want: []string{"unstarted-pod", "big-old-group", "mid-group"},
			},
			{
				name: "negative and extreme priorities",
				victims: objs(
					v("min", math.MinInt32), v("neg", -1), v("max", math.MaxInt32), v("zero", 0),
				),
				want: []string{"max", "zero", "neg", "min"},
			},
			{
				name: "group before pod at equal priority",
				victims: objs(
					v("old-pod", 5).Started(t0),
					v("unstarted-group", 5).Group(2),
					v("young-pod", 5).Started(t0.Add(time.Hour)),
				),
				want: []string{"unstarted-group", "old-pod", "young-pod"},
			},
			{
				name: "bigger group first",
				victims: objs(
					v("small-old", 5).Group(2).Started(t0),
					v("big-young", 5).Group(8).Started(t0.Add(time.Hour)),
					v("mid", 5).Group(4).Started(t0.Add(time.Minute)),
				),
				want: []string{"big-young", "mid", "small-old"},
			},
			{
				name: "groups of equal size: earlier start first, unstarted last",
				victims: objs(
					v("unstarted", 5).Group(4),
					v("late", 5).Group(4).Started(t0.Add(time.Second)),
					v("early", 5).Group(4).Started(t0),
				),
				want: []string{"early", "late", "unstarted"},
			},
			{
				name: "pods: earlier start first, unstarted last",
				victims: objs(
					v("unstarted", 5), v("late", 5).Started(t0.Add(time.Minute)), v("early", 5).Started(t0),
					v("before-1970", 5).Started(time.Unix(-5, 0)),
				),
				want: []string{"before-1970", "early", "late", "unstarted"},
			},
			{
				name: "pods are not ordered by members",
				victims: []abi.Victim{
					withMembers(v("late-claims-9", 5).Started(t0.Add(time.Second)), 9),
					withMembers(v("early-claims-1", 5).Started(t0), 1),
				},
				want: []string{"early-claims-1", "late-claims-9"},
			},
			{
				name: "a kind other than group is a pod",
				victims: []abi.Victim{
					withKind(v("odd-kind", 5).Started(t0), 7),
					v("group", 5).Group(1).Obj(),
					v("pod", 5).Started(t0.Add(-time.Hour)).Obj(),
				},
				want: []string{"group", "pod", "odd-kind"},
			},
			{
				name: "UID breaks ties between pods",
				victims: objs(
					v("b", 5).Started(t0), v("a", 5).Started(t0), v("c", 5).Started(t0),
				),
				want: []string{"a", "b", "c"},
			},
			{
				name:    "UID breaks ties between unstarted pods",
				victims: objs(v("z", 5), v("x", 5), v("y", 5)),
				want:    []string{"x", "y", "z"},
			},
			{
				name: "UID breaks ties between groups",
				victims: objs(
					v("g2", 5).Group(3).Started(t0), v("g1", 5).Group(3).Started(t0),
				),
				want: []string{"g1", "g2"},
			},
			{
				name: "PDB violation does not order (the host reprieves violators first itself)",
				victims: objs(
					v("b", 5).Started(t0).PDBViolating(), v("a", 5).Started(t0),
				),
				want: []string{"a", "b"},
			},
			{
				name: "equal in every rule: batch order",
				victims: objs(
					v("first", 5).UID("same"), v("second", 5).UID("same"), v("third", 5).UID("same"),
				),
				want: []string{"first", "second", "third"},
			},
			{
				name:    "one victim",
				victims: objs(v("only", 0)),
				want:    []string{"only"},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if diff := cmp.Diff(c.want, policytest.Ordered(s.VictimOrder, c.victims...)); diff != "" {
					t.Errorf("order (-want, +got):\n%s", diff)
				}
				// The order must not depend on the batch order, except
				// between victims equal in every rule.
				rev := make([]abi.Victim, len(c.victims))
				for i, x := range c.victims {
					rev[len(rev)-1-i] = x
				}
				if c.name != "equal in every rule: batch order" {
					if diff := cmp.Diff(c.want, policytest.Ordered(s.VictimOrder, rev...)); diff != "" {
						t.Errorf("order of the reversed batch (-want, +got):\n%s", diff)
					}
				}
			})
		}
		t.Run("empty batch", func(t *testing.T) {
			if got := policytest.Order(s.VictimOrder); len(got) != 0 {
				t.Errorf("order of no victims = %v, want none", got)
			}
		})
	})
}

func objs(ws ...*policytest.VictimWrapper) []abi.Victim {
	out := make([]abi.Victim, len(ws))
	for i, w := range ws {
		out[i] = w.Obj()
	}
	return out
}

// randomVictim draws every field from a few values, extremes included, so
// that pairs often tie on some rules and differ on others.
func randomVictim(r *rand.Rand) abi.Victim {
	pick := func(n int) int { return r.IntN(n) }
	x := abi.Victim{
		Kind:      []abi.VictimKind{abi.VictimPod, abi.VictimGroup, 2, math.MaxUint32}[pick(4)],
		Priority:  []int32{math.MinInt32, -1, 0, 1, 2, math.MaxInt32}[pick(6)],
		StartTime: []int64{0, 0, 1, -1, t0.UnixNano(), t0.UnixNano() + 1, math.MaxInt64, math.MinInt64}[pick(8)],
		Members:   []int32{math.MinInt32, -1, 0, 1, 2, 3, math.MaxInt32}[pick(7)],
		UID:       []string{"", "a", "b", "ab", "B", "é", "\xff"}[pick(7)],
	}
	x.PDBViolating = pick(2) == 0
	return x
}

// TestMoreImportantAgreesWithHost checks, on random victims, that the
// policy decides exactly as the host's native default.
func TestMoreImportantAgreesWithHost(t *testing.T) {
	r := rand.New(rand.NewPCG(5710, 1))
	for range 200_000 {
		a, b := randomVictim(r), randomVictim(r)
		if got, want := logic.MoreImportant(a, b), policy.MoreImportant(&a, &b); got != want {
			t.Fatalf("MoreImportant(%+v, %+v) = %v, host/policy.MoreImportant says %v", a, b, got, want)
		}
	}
}

// TestMoreImportantIsStrictWeakOrder checks the properties a sort relies
// on: irreflexive, asymmetric, transitive, and "neither is more important"
// transitive too.
func TestMoreImportantIsStrictWeakOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(4671, 2))
	more := logic.MoreImportant
	equiv := func(a, b abi.Victim) bool { return !more(a, b) && !more(b, a) }
	for range 200_000 {
		a, b, c := randomVictim(r), randomVictim(r), randomVictim(r)
		switch {
		case more(a, a):
			t.Fatalf("irreflexive: MoreImportant(a, a) for %+v", a)
		case more(a, b) && more(b, a):
			t.Fatalf("asymmetric: both ways for %+v, %+v", a, b)
		case more(a, b) && more(b, c) && !more(a, c):
			t.Fatalf("transitive: %+v > %+v > %+v but not a > c", a, b, c)
		case equiv(a, b) && equiv(b, c) && !equiv(a, c):
			t.Fatalf("equivalence transitive: %+v ~ %+v ~ %+v but not a ~ c", a, b, c)
		}
	}
}

// FuzzPreEnqueue checks, natively, that every gate the logic returns is one
// the host accepts and agrees with the quorum rule.
func FuzzPreEnqueue(f *testing.F) {
	f.Add("ns", "train", int32(4), int32(3))
	f.Add("", "", int32(0), int32(0))
	f.Add("ns", "x\xff\"\n", int32(0), int32(1))
	f.Add("ns", strings.Repeat("\x01", 2000), int32(math.MaxInt32), int32(math.MinInt32))
	f.Fuzz(func(t *testing.T, ns, name string, minCount, members int32) {
		p := policytest.MakePod().Namespace(ns).Name("p").Group(name, minCount).GroupMembers(members)
		g := logic.PreEnqueue(p.View())
		var dec abi.Gate
		if err := abi.DecodeGate(abi.AppendGate(nil, &g), &dec); err != nil {
			t.Fatalf("the host refuses gate %+v: %v", g, err)
		}
		checkReason(t, g.Reason)
		wantWait := name != "" && (minCount == 0 || members < minCount)
		if got := g.Code == abi.GateWait; got != wantWait {
			t.Fatalf("group %q minCount %d members %d: gate %+v, want wait=%v", name, minCount, members, g, wantWait)
		}
	})
}
