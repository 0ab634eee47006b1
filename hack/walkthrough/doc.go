// Package walkthrough holds the test that runs the README's "write, test and
// load a policy" walkthrough as written: every fenced block marked
// "sh walkthrough", in order, on a copy of the checkout's files, then checks
// the SchedulingPolicy it printed. Steps that need a cluster are in unmarked
// blocks; the e2e suite covers applying such a manifest (TestPolicyAPI).
package walkthrough
