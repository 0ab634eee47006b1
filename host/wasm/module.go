package wasm

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

// Module is a validated, compiled policy module and its pool of instances.
// Its methods are safe for concurrent use.
type Module struct {
	rt       *Runtime
	name     string
	limits   Limits
	engine   wazero.Runtime
	compiled wazero.CompiledModule
	sha      [32]byte
	facts    *moduleFacts
	major    uint16
	minor    uint16
	funcs    [numFuncs]bool // contract functions the module exports
	logger   *slog.Logger   // rt.logger with the module attribute
	output   outputLimiter

	// mu guards free, live, inUse, closed and stats.
	// Lock order: after Runtime.mu, before Runtime.watchMu.
	mu     sync.Mutex
	free   []*Instance // idle instances, most recently released last
	live   int         // instances created and not yet closed
	closed bool
	stats  Stats
}

// Stats counts a module's instances, for metrics and tests.
type Stats struct {
	Live         int    // instances not yet closed: in use + free
	Free         int    // idle instances in the pool
	Instantiated uint64 // instances created since Load
	Discarded    uint64 // broken instances closed on Release
	Recycled     uint64 // healthy instances closed on Release for their memory (see recycleBytes)
	DroppedLines uint64 // guest output lines dropped by the rate limiter
}

// recycleBytes is the memory above which a released instance is closed
// rather than pooled: half the limit.
func recycleBytes(l Limits) uint64 { return uint64(l.MemoryPages) * 65536 / 2 }

// Load validates a policy module, instruments it for deadlines, compiles it,
// checks its ABI version on a first instance and returns it ready to use.
// name labels the module in errors and logs. Every error names the module,
// says what is wrong and what to do.
func (rt *Runtime) Load(ctx context.Context, name string, bin []byte, limits Limits) (*Module, error) {
	if err := limits.Validate(); err != nil {
		return nil, fmt.Errorf("load module %q: invalid limits: %w", name, err)
	}
	if len(bin) > instrument.MaxModuleSize {
		return nil, classify(ErrTooLarge, fmt.Errorf("load module %q: %d bytes, above the limit of %d bytes: shrink it (build with -opt=z and -no-debug)",
			name, len(bin), instrument.MaxModuleSize))
	}
	facts, err := parseModule(bin)
	if err != nil {
		return nil, fmt.Errorf("load module %q: %w: pass a .wasm file built with the guest SDK", name, err)
	}
	if err := checkImports(facts); err != nil {
		return nil, classify(ErrForbiddenImport, fmt.Errorf("load module %q: %w", name, err))
	}
	if err := checkStructure(facts, limits); err != nil {
		return nil, fmt.Errorf("load module %q: %w", name, err)
	}
	instrumented, _, err := instrument.Instrument(bin, interruptExport)
	if err != nil {
		return nil, fmt.Errorf("load module %q: cannot instrument it for deadline enforcement: %w: "+
			"rebuild it for WebAssembly 2.0 core features only (no exception handling or other proposals)", name, err)
	}

	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil, fmt.Errorf("load module %q: the runtime is closed", name)
	}
	engine, err := rt.engine(ctx, limits.MemoryPages)
	rt.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("load module %q: %w", name, err)
	}
	compiled, err := engine.CompileModule(ctx, instrumented)
	if err != nil {
		return nil, fmt.Errorf("load module %q: invalid module: %w: rebuild it with the guest SDK", name, err)
	}
	unknown, err := checkSignatures(compiled)
	if err != nil {
		_ = compiled.Close(ctx)
		return nil, classify(ErrABIMismatch, fmt.Errorf("load module %q: %w", name, err))
	}

	m := &Module{
		rt:       rt,
		name:     name,
		limits:   limits,
		engine:   engine,
		compiled: compiled,
		sha:      sha256.Sum256(bin),
		facts:    facts,
		logger:   rt.logger.With("module", name),
	}
	m.output.init(rt.now)
	fns := compiled.ExportedFunctions()
	for i, name := range funcExports {
		_, m.funcs[i] = fns[name]
	}
	inst, err := m.newInstance(ctx)
	if err != nil {
		_ = compiled.Close(ctx)
		return nil, err
	}
	m.live, m.stats.Instantiated = 1, 1
	if err := m.probeVersion(inst); err != nil {
		inst.close()
		_ = compiled.Close(ctx)
		return nil, err
	}
	if len(unknown) > 0 {
		m.logger.Info("module exports functions this host does not know; they are ignored (built against a newer ABI minor version?)",
			"exports", unknown, "abi", fmt.Sprintf("%d.%d", m.major, m.minor))
	}

	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		inst.close()
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("load module %q: the runtime is closed", name)
	}
	rt.modules[m] = struct{}{}
	rt.mu.Unlock()
	m.Release(inst)
	return m, nil
}

// probeVersion reads the module's ABI version and refuses another major.
func (m *Module) probeVersion(inst *Instance) error {
	inst.deadlineTicks.Store(m.rt.deadlineTicks(max(m.limits.Deadline, minInitDeadline)))
	defer m.rt.setDeadline(inst, m.rt.deadlineTicks(m.limits.Deadline))
	r, err := inst.Call(FuncABIVersion, 0, 0)
	if err != nil {
		return fmt.Errorf("load module %q: read its ABI version: %w", m.name, err)
	}
	m.major, m.minor = abi.SplitVersion(uint32(r))
	if m.major != abi.VersionMajor {
		return classify(ErrABIMismatch, fmt.Errorf("load module %q: speaks ABI %d.%d, this host speaks %d.x: rebuild it with the current guest SDK",
			m.name, m.major, m.minor, abi.VersionMajor))
	}
	return nil
}

// Name is the name the module was loaded under.
func (m *Module) Name() string { return m.name }

// Limits are the sandbox limits the module was loaded with.
func (m *Module) Limits() Limits { return m.limits }

// ABIVersion is the contract version the module reported.
func (m *Module) ABIVersion() (major, minor uint16) { return m.major, m.minor }

// SHA256 is the digest of the binary given to Load (before instrumentation).
func (m *Module) SHA256() [32]byte { return m.sha }

// HasExport reports whether the module exports name (of any kind).
func (m *Module) HasExport(name string) bool {
	for _, e := range m.facts.exports {
		if e.name == name {
			return true
		}
	}
	return false
}

// HasFunc reports whether the module exports the contract function f.
func (m *Module) HasFunc(f FuncID) bool { return f < numFuncs && m.funcs[f] }

// Imports lists the module's imports as "module.name", in binary order.
func (m *Module) Imports() []string {
	out := make([]string, len(m.facts.imports))
	for i, e := range m.facts.imports {
		out[i] = e.module + "." + e.name
	}
	return out
}

// Exports lists the names of the module's exports (functions, memory and any
// other kind), sorted.
func (m *Module) Exports() []string {
	out := make([]string, len(m.facts.exports))
	for i, e := range m.facts.exports {
		out[i] = e.name
	}
	slices.Sort(out)
	return out
}

// MemoryPages are the initial and maximum sizes the module declares for its
// memory, in 64 KiB pages; the limit in force is Limits().MemoryPages.
func (m *Module) MemoryPages() (min uint32, max uint32, hasMax bool) {
	l := m.facts.memories[0] // checkStructure ensured exactly one
	return uint32(l.min), uint32(l.max), l.hasMax
}

// Stats returns the module's instance counts.
func (m *Module) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Live, s.Free = m.live, len(m.free)
	s.DroppedLines = m.output.droppedTotal()
	return s
}

// Acquire returns an idle instance, or a new one. The caller has it to itself
// until it gives it back with Release.
func (m *Module) Acquire(ctx context.Context) (*Instance, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("module %q is closed: acquire an instance of the module that replaced it", m.name)
	}
	if n := len(m.free); n > 0 {
		inst := m.free[n-1]
		m.free[n-1] = nil
		m.free = m.free[:n-1]
		inst.released = false
		m.mu.Unlock()
		return inst, nil
	}
	m.live++ // counted before instantiating, so Close cannot miss it
	m.stats.Instantiated++
	m.mu.Unlock()

	inst, err := m.newInstance(ctx)
	if err != nil {
		m.mu.Lock()
		m.live--
		m.mu.Unlock()
		return nil, err
	}
	return inst, nil
}

// Release gives an instance back. It is closed instead of pooled if it is
// broken, if the pool is full or if the module is closed. Releasing an
// instance twice, or another module's instance, panics.
func (m *Module) Release(inst *Instance) {
	if inst == nil {
		return
	}
	if inst.module != m {
		panic(fmt.Sprintf("wasm: instance of module %q released to module %q", inst.module.name, m.name))
	}
	m.mu.Lock()
	if inst.released {
		m.mu.Unlock()
		panic(fmt.Sprintf("wasm: instance of module %q released twice", m.name))
	}
	// An instance whose memory grew past half its limit is closed, not
	// pooled: guests are built with TinyGo's leaking GC (docs/RATIONALE.md),
	// so a policy that allocates only ever grows, and closing it here, between
	// calls, keeps it from running out of memory inside one.
	recycle := uint64(inst.mem.Size()) > recycleBytes(m.limits)
	if !inst.broken && !recycle && !m.closed && len(m.free) < m.limits.PoolSize {
		inst.released = true
		m.free = append(m.free, inst)
		m.mu.Unlock()
		return
	}
	inst.released = true
	m.live--
	switch {
	case inst.broken:
		m.stats.Discarded++
	case recycle:
		m.stats.Recycled++
	}
	m.mu.Unlock()
	inst.close()
}

// Close closes the idle instances now and makes the ones in use close on
// Release, so calls in flight finish on the instances they started on.
// Acquire fails afterwards.
func (m *Module) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	free := m.free
	m.free = nil
	m.live -= len(free)
	m.mu.Unlock()

	m.rt.mu.Lock()
	delete(m.rt.modules, m)
	m.rt.mu.Unlock()

	for _, inst := range free {
		inst.close()
	}
	// wazero allows closing a compiled module while instances of it run.
	return m.compiled.Close(ctx)
}
