package filter

import "sync"

// Reasons builds the reasons that name a value, prefix + value ("node(s)
// are not in pool " + pool), once per distinct value rather than once per
// node: a Func that concatenates allocates per node, and a module's memory
// is never freed. It keeps the last [MaxCachedReasons] values built and
// rebuilds the oldest beyond them. A Reasons is safe for concurrent use (a
// native policy may judge nodes in parallel).
type Reasons struct {
	prefix string
	mu     sync.Mutex
	built  []string // prefix + value, the value being the suffix
	next   int      // the entry to replace when built is full
	last   int      // the entry found last
}

// MaxCachedReasons is how many reasons a [Reasons] keeps.
const MaxCachedReasons = 64

// NewReasons returns a Reasons that prefixes values with prefix.
func NewReasons(prefix string) *Reasons { return &Reasons{prefix: prefix} }

// For returns prefix + value.
func (r *Reasons) For(value string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last < len(r.built) && r.is(r.built[r.last], value) {
		return r.built[r.last]
	}
	for i, s := range r.built {
		if r.is(s, value) {
			r.last = i
			return s
		}
	}
	s := r.prefix + value
	if len(r.built) < MaxCachedReasons {
		r.built = append(r.built, s)
		r.last = len(r.built) - 1
		return s
	}
	r.built[r.next], r.last = s, r.next
	r.next = (r.next + 1) % MaxCachedReasons
	return s
}

// is reports whether s, a reason built by r, is the one of value.
func (r *Reasons) is(s, value string) bool {
	return len(s) == len(r.prefix)+len(value) && s[len(r.prefix):] == value
}
