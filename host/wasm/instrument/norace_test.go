//go:build !race

package instrument_test

const raceEnabled = false
