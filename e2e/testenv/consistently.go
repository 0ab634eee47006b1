package testenv

import (
	"testing"
	"time"
)

// Consistently is how a test checks that something does not happen: that a
// pod is not bound, not preempted, not touched. It calls cond every interval
// for window, and once more at its end; cond returns nil while all is as it
// should be and an error saying what happened otherwise. At the first error
// Consistently reports it through tb.Errorf, with when in the window it came,
// and returns false (call tb.FailNow for a fatal check); after a window
// without one it returns true.
//
//	if !testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error {
//		if p := getPod(t, c, ns, "theirs"); p.Spec.NodeName != "" {
//			return fmt.Errorf("bound to %s", p.Spec.NodeName)
//		}
//		return nil
//	}) {
//		t.FailNow()
//	}
//
// # What the window means
//
// Nothing happening for window is evidence, not proof: a scheduler that
// would act later than window, or only between two looks and undo it before
// the next, passes. So window comes from how soon the scheduler would act if
// it were wrong: a few times its reaction time (it handles an event within
// milliseconds on an idle machine; a retry out of backoff comes within a
// second or two), enough for a pass to be worth something, not so much that
// the suite crawls. The window starts when Consistently is called: call it
// once the state to keep holds, after waiting for that on an observable
// condition (the pods reported gated or unschedulable, the victim deleted),
// not after a sleep. Unlike a sleep followed by one look, Consistently fails
// as soon as the unwanted state appears, and sees one that does not last.
func Consistently(tb testing.TB, window, interval time.Duration, cond func() error) bool {
	tb.Helper()
	start := time.Now()
	end := start.Add(window)
	for {
		err := cond()
		if err != nil {
			tb.Errorf("within %v of the %v window in which it must not: %v", time.Since(start).Round(time.Millisecond), window, err)
			return false
		}
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		time.Sleep(min(interval, left))
	}
}
