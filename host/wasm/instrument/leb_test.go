package instrument

import "testing"

func TestLEB(t *testing.T) {
	tests := []struct {
		in     []byte
		bits   uint
		signed bool
		want   uint64
		n      int // bytes consumed; 0 means an error is expected
	}{
		{[]byte{0x00}, 32, false, 0, 1},
		{[]byte{0x7f}, 32, false, 127, 1},
		{[]byte{0x80, 0x01}, 32, false, 128, 2},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x00}, 32, false, 0, 5},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 32, false, 0xffffffff, 5},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 32, false, 0, 0},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 32, false, 0, 0},
		{[]byte{0x80}, 32, false, 0, 0},
		{[]byte{}, 32, false, 0, 0},
		{[]byte{0x7f}, 32, true, ^uint64(0), 1},
		{[]byte{0x3f}, 32, true, 63, 1},
		{[]byte{0x40}, 32, true, ^uint64(63), 1},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x07}, 32, true, 0x7fffffff, 5},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x78}, 32, true, uint64(0xffffffff80000000), 5},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x08}, 32, true, 0, 0},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x70}, 32, true, 0, 0},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 33, true, 0xffffffff, 5},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 33, true, 0, 0},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x70}, 33, true, uint64(0xffffffff00000000), 5},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 64, false, ^uint64(0), 10},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03}, 64, false, 0, 0},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, 64, true, 1 << 63, 10},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, 64, true, 1<<63 - 1, 10},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}, 64, true, 0, 0},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 64, true, 0, 0},
	}
	for _, tc := range tests {
		// Surround the input so that offsets and bounds are exercised.
		b := append(append([]byte{0xaa}, tc.in...), 0xbb)
		r := reader{b: b, pos: 1, end: 1 + len(tc.in)}
		got, err := r.leb(tc.bits, tc.signed)
		if tc.n == 0 {
			if err == nil {
				t.Errorf("% x (%d bits, signed %v): no error, got %#x", tc.in, tc.bits, tc.signed, got)
			}
			continue
		}
		if err != nil || got != tc.want || r.pos-1 != tc.n {
			t.Errorf("% x (%d bits, signed %v) = %#x, %d bytes, %v; want %#x, %d bytes",
				tc.in, tc.bits, tc.signed, got, r.pos-1, err, tc.want, tc.n)
		}
	}
}

func TestAppendU32(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 300, 1<<21 - 1, 1 << 28, 0xffffffff} {
		b := appendU32(nil, v)
		r := reader{b: b, end: len(b)}
		got, err := r.u32()
		if err != nil || got != v || r.pos != len(b) {
			t.Errorf("round trip %d: got %d, %v (%d of %d bytes)", v, got, err, r.pos, len(b))
		}
	}
}
