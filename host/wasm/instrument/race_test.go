//go:build race

package instrument_test

// raceEnabled: wazero's optimizing compiler is ~8x slower under -race.
const raceEnabled = true
