package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The to* functions turn a value from any layer (YAML types, or strings
// from the environment and the command line) into a key's kind.

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		if x == float64(int64(x)) {
			return int64(x), nil
		}
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%v is not an integer", v)
}

func toFloat(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
			return 0, fmt.Errorf("%q is not a number: write it like 50 or 12.5", x)
		}
	default:
		return 0, fmt.Errorf("%v is not a number: write it like 50 or 12.5", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%v is not a finite number", v)
	}
	return f, nil
}

func toDuration(v any) (time.Duration, error) {
	switch x := v.(type) {
	case time.Duration:
		return x, nil
	case string:
		if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%v is not a duration: write it like 100ms, 2s or 1m", v)
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("%v is not a boolean: allowed true or false", v)
}

func toString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("%v is not a string", v)
}
