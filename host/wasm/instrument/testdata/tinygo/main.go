// Source of ../tinygo.wasm, a TinyGo guest used as a real-world fixture:
//
//	tinygo build -o ../tinygo.wasm -target=$TINYGOROOT/targets/wasmsched-wasm-unknown.json \
//	  -buildmode=c-shared -no-debug -scheduler=none -gc=conservative .
package main

import "sort"

var keys []uint64

// sortKeys sorts n pseudo-random keys and returns a checksum of the order.
//
//export sort_keys
func sortKeys(n uint32, seed uint64) uint64 {
	keys = keys[:0]
	x := seed | 1
	for i := uint32(0); i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		keys = append(keys, x%1000)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var sum uint64
	for i, k := range keys {
		sum = sum*31 + k + uint64(i)
	}
	return sum
}

var counter uint64

// spin never returns.
//
//export spin
func spin() {
	for {
		counter++
	}
}

func main() {}
