//go:build race

package queue

const raceEnabled = true
