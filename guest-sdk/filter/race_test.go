//go:build race

package filter

// raceEnabled: the race detector allocates, so allocation counts are off.
const raceEnabled = true
