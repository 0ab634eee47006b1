package logic

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// The hand-written syntax checks must agree with the apimachinery functions
// upstream's matchers call.
func checkSyntax(t *testing.T, s string) {
	t.Helper()
	if got, want := isLabelKey(s), len(content.IsLabelKey(s)) == 0; got != want {
		t.Errorf("isLabelKey(%q) = %v, content.IsLabelKey says %v", s, got, want)
	}
	if got, want := isLabelValue(s), len(content.IsLabelValue(s)) == 0; got != want {
		t.Errorf("isLabelValue(%q) = %v, content.IsLabelValue says %v", s, got, want)
	}
	if got, want := isDecimalInteger(s), len(content.IsDecimalInteger(s)) == 0; got != want {
		t.Errorf("isDecimalInteger(%q) = %v, content.IsDecimalInteger says %v", s, got, want)
	}
	v, ok := parseInt(s)
	wv, err := strconv.ParseInt(s, 10, 64)
	if ok != (err == nil) || ok && v != wv {
		t.Errorf("parseInt(%q) = %d, %v; strconv.ParseInt = %d, %v", s, v, ok, wv, err)
	}
}

var syntaxSeeds = []string{
	"", "a", "A", "0", "-0", "+0", "-", "+", "00", "07", "-7", "+7", "1_000", "0x10",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"99999999999999999999", "zone", "example.com/zone", "Example.com/zone", "example.com/", "/zone",
	"a/b/c", "a..b/c", "a.-b/c", "-a/b", "a-/b", "a/-b", "a/b-", "a/b_", "a_b", "a.b-c_d",
	"bad key", "ä", "a\nb",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",  // 63
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", // 64
}

func FuzzSyntax(f *testing.F) {
	for _, s := range syntaxSeeds {
		f.Add(s)
	}
	f.Fuzz(checkSyntax)
}

// TestSyntaxRandom runs many strings over the alphabet that matters,
// including prefixes of subdomain length, in every plain `go test`.
func TestSyntaxRandom(t *testing.T) {
	const alphabet = "aZ09-_./+ "
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 0, 300)
	for i := range 200000 {
		n := r.IntN(12)
		if i%50 == 0 {
			n = 240 + r.IntN(30) // around the 253-byte prefix limit
		}
		buf = buf[:0]
		for range n {
			buf = append(buf, alphabet[r.IntN(len(alphabet))])
		}
		checkSyntax(t, string(buf))
		if t.Failed() {
			return
		}
	}
	// Keys with a long valid prefix.
	for _, n := range []int{252, 253, 254} {
		prefix := make([]byte, n)
		for i := range prefix {
			prefix[i] = 'a'
			if i%60 == 59 {
				prefix[i] = '.'
			}
		}
		checkSyntax(t, string(prefix)+"/name")
	}
}
