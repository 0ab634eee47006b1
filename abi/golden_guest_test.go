package abi_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

const goldenGuestPath = "testdata/goldenguest/goldenguest.wasm"

// goldenGuest is the TinyGo build of testdata/goldenguest in plain wazero.
type goldenGuest struct {
	ctx context.Context
	mod api.Module
}

func newGoldenGuest(t *testing.T) *goldenGuest {
	t.Helper()
	wasm, err := os.ReadFile(goldenGuestPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is missing: run `make policies` (or hack/policies.sh abi/testdata/goldenguest) and commit it", goldenGuestPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("instantiate %s: %v", goldenGuestPath, err)
	}
	g := &goldenGuest{ctx: ctx, mod: mod}
	// A conforming module: the required exports with the contract's signatures.
	if mod.Memory() == nil {
		t.Fatalf("%s exports no %q", goldenGuestPath, abi.ExportMemory)
	}
	for _, name := range append([]string{abi.ExportInitialize}, abi.RequiredExports...) {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			t.Fatalf("%s does not export %s", goldenGuestPath, name)
		}
		want, _ := abi.ExportSignature(name)
		def := fn.Definition()
		if !slices.Equal(valTypes(def.ParamTypes()), want.Params) || !slices.Equal(valTypes(def.ResultTypes()), want.Results) {
			t.Errorf("%s: signature %v -> %v, want %v -> %v", name, def.ParamTypes(), def.ResultTypes(), want.Params, want.Results)
		}
	}
	if _, err := mod.ExportedFunction(abi.ExportInitialize).Call(ctx); err != nil {
		t.Fatalf("%s: %v", abi.ExportInitialize, err)
	}
	return g
}

func valTypes(ts []api.ValueType) []abi.ValType {
	out := make([]abi.ValType, 0, len(ts))
	for _, t := range ts {
		out = append(out, abi.ValType(t))
	}
	return out
}

func (g *goldenGuest) call(t *testing.T, name string, params ...uint64) uint64 {
	t.Helper()
	fn := g.mod.ExportedFunction(name)
	if fn == nil {
		t.Fatalf("%s does not export %s: rebuild it with `make policies`", goldenGuestPath, name)
	}
	res, err := fn.Call(g.ctx, params...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res[0]
}

// output reads the bytes a Result points at, or returns the guest's message.
func (g *goldenGuest) output(t *testing.T, res uint64) ([]byte, error) {
	t.Helper()
	ptr, n, code, ok := abi.Result(res).Unpack()
	if !ok {
		msg, _ := g.output(t, g.call(t, abi.ExportLastError))
		return nil, errors.New(code.String() + ": " + string(msg))
	}
	b, ok := g.mod.Memory().Read(ptr, n)
	if !ok {
		t.Fatalf("result [%d, +%d) is outside guest memory", ptr, n)
	}
	return bytes.Clone(b), nil
}

// roundTrip writes b to the guest's input buffer and calls golden_roundtrip.
func (g *goldenGuest) roundTrip(t *testing.T, b []byte) ([]byte, error) {
	t.Helper()
	ptr := uint32(g.call(t, abi.ExportBuffer, uint64(len(b))))
	if ptr == 0 {
		t.Fatalf("%s(%d) returned 0", abi.ExportBuffer, len(b))
	}
	if !g.mod.Memory().Write(ptr, b) {
		t.Fatalf("input buffer [%d, +%d) is outside guest memory", ptr, len(b))
	}
	return g.output(t, g.call(t, "golden_roundtrip", uint64(len(b))))
}

// TestGoldenGuest holds the TinyGo build of the codecs to the golden vectors:
// the guest's encoding of every case, and its decode-and-re-encode of every
// vector, must be the committed bytes.
func TestGoldenGuest(t *testing.T) {
	g := newGoldenGuest(t)
	const stale = "\n(if abi changed, the committed goldenguest.wasm may be stale: run `make policies`)"
	if v := uint32(g.call(t, abi.ExportABIVersion)); v != abi.Version {
		major, minor := abi.SplitVersion(v)
		t.Fatalf("guest ABI version %d.%d, want %d.%d%s", major, minor, abi.VersionMajor, abi.VersionMinor, stale)
	}
	cases := abitest.Cases()
	if n := int(int32(g.call(t, "golden_count"))); n != len(cases) {
		t.Fatalf("golden_count() = %d, want %d%s", n, len(cases), stale)
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := readGolden(t, c.Name)
			got, err := g.output(t, g.call(t, "golden_encode", uint64(i)))
			if err != nil {
				t.Fatalf("golden_encode(%d): %v", i, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("TinyGo encoding differs from the golden vector%s\n%s", stale, hexDiff(want, got))
			}
			got, err = g.roundTrip(t, want)
			if err != nil {
				t.Fatalf("golden_roundtrip: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("TinyGo decode and re-encode changed the bytes%s\n%s", stale, hexDiff(want, got))
			}
		})
	}
}

// TestGoldenGuestErrors checks the guest's failure path: a malformed record is
// refused with -ErrDecode and a message, an unknown case with an error.
func TestGoldenGuestErrors(t *testing.T) {
	g := newGoldenGuest(t)
	bad := readGolden(t, "pod-full")
	bad[72+7] = 0xff // uid length (u32 at 76) far beyond the record
	_, err := g.roundTrip(t, bad)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("abi: pod field uid: string out of bounds")) {
		t.Errorf("round trip of a bad pod: error %v, want the decoder's message", err)
	}
	if _, _, code, ok := abi.Result(g.call(t, "golden_roundtrip", uint64(len(bad)))).Unpack(); ok || code != abi.ErrDecode {
		t.Errorf("golden_roundtrip of a bad pod: code %v ok %v, want %v", code, ok, abi.ErrDecode)
	}
	if _, err := g.output(t, g.call(t, "golden_encode", uint64(len(abitest.Cases())))); err == nil {
		t.Error("golden_encode(out of range): no error")
	}
}
