package config

import (
	"fmt"
	"strings"
)

// didYouMean is `; did you mean "K"?` for the candidate K nearest to name,
// or "" when none is near enough to be a likely typo. Nearness is the edit
// distance ignoring case, then with case, then the candidates' order; near
// enough is at most a third of name's length, and at least 2.
func didYouMean(name string, candidates []string) string {
	best, bestFold, bestExact := "", -1, -1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		fold := editDistance(lower, strings.ToLower(c))
		if bestFold >= 0 && fold > bestFold {
			continue
		}
		exact := editDistance(name, c)
		if bestFold < 0 || fold < bestFold || exact < bestExact {
			best, bestFold, bestExact = c, fold, exact
		}
	}
	if bestFold < 0 || bestFold > max(2, len(name)/3) {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes (key
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
