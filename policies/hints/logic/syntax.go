package logic

// Hand-written, allocation-free versions of the apimachinery checks the
// upstream matchers run: strconv.ParseInt(s, 10, 64), content.IsDecimalInteger,
// and the label key and value syntax that labels.NewRequirement validates.
// The guest has no regexp on its hot path, so the patterns are spelled out.

const (
	maxInt64       = 1<<63 - 1
	labelMaxLen    = 63  // a label name or value
	subdomainMaxLn = 253 // a DNS-1123 subdomain (a label key's prefix)
)

// parseInt is strconv.ParseInt(s, 10, 64): an optional sign, then one or
// more decimal digits, in range; ok is false otherwise.
func parseInt(s string) (v int64, ok bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (maxInt64+1)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > maxInt64+1 {
			return 0, false
		}
	}
	switch {
	case neg:
		return int64(-u), true // -(1<<63) wraps to itself, as wanted
	case u > maxInt64:
		return 0, false
	}
	return int64(u), true
}

// isDecimalInteger is content.IsDecimalInteger: "0", or an optional '-'
// followed by a digit 1-9 and any digits (no '+', no leading zeros).
func isDecimalInteger(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '-' {
		if len(s) == 1 {
			return false
		}
		i = 1
	}
	if s[i] == '0' {
		return len(s) == 1
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isLabelName matches ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] within 63
// bytes: the name part of a label key, and a non-empty label value.
func isLabelName(s string) bool {
	n := len(s)
	if n == 0 || n > labelMaxLen || !isAlnum(s[0]) || !isAlnum(s[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isLabelValue is validation.IsValidLabelValue: empty, or a label name.
func isLabelValue(s string) bool { return s == "" || isLabelName(s) }

// isLabelKey is content.IsLabelKey: a name, optionally prefixed by a DNS-1123
// subdomain and '/'.
func isLabelKey(s string) bool {
	slash := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if slash >= 0 {
				return false // more than one '/'
			}
			slash = i
		}
	}
	if slash < 0 {
		return isLabelName(s)
	}
	return isSubdomain(s[:slash]) && isLabelName(s[slash+1:])
}

// isSubdomain is content.IsDNS1123Subdomain: at most 253 bytes of
// dot-separated lowercase labels, each [a-z0-9]([-a-z0-9]*[a-z0-9])?.
func isSubdomain(s string) bool {
	if s == "" || len(s) > subdomainMaxLn {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			continue
		}
		if !isDNSLabel(s[start:i]) {
			return false
		}
		start = i + 1
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' }

// isDNSLabel matches [a-z0-9]([-a-z0-9]*[a-z0-9])? (the subdomain pattern
// bounds only the whole name's length, not each label's).
func isDNSLabel(s string) bool {
	n := len(s)
	if n == 0 || !isLowerAlnum(s[0]) || !isLowerAlnum(s[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}
