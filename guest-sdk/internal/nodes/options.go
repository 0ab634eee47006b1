package nodes

import "github.com/wasmsched/wasmsched/abi"

// The module's placement options: filter.Register sets the filter's
// events, score.Register whether its scores are normalised. Both slots of a
// module answer with the one record.
var options abi.PlacementOptions

// SetFilterEvents sets the events the module's filter declares (nil: the
// host's defaults).
func SetFilterEvents(events []abi.FilterEvent) {
	options.FilterEvents = append([]abi.FilterEvent(nil), events...)
}

// SetScoreNormalized sets whether the module's scores are normalised.
func SetScoreNormalized(v bool) { options.ScoreNormalized = v }

// Options returns the module's placement options (sharing the events).
func Options() abi.PlacementOptions { return options }

// AppendOptions appends the module's placement options record to dst.
func AppendOptions(dst []byte) []byte { return abi.AppendPlacementOptions(dst, &options) }
