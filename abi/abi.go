// Package abi is the one definition of the contract between the wasmsched host
// and a policy module: the ABI version, the names of every export, the calling
// convention, the enumerations, and the codecs of the records that cross the
// boundary. Host and guest both import it; nothing about the contract is
// written anywhere else.
//
// It imports only the standard library and builds under TinyGo, so the same
// codec code runs on both sides of the boundary.
//
// # Calling convention
//
// Every module exports linear memory as "memory" and the functions named by the
// Export* constants. The host never allocates in guest memory itself: it asks
// the guest for its input buffer with [ExportBuffer], writes the input records
// there, and calls a slot function with the input length. Slot functions that
// produce bytes return an i64 [Result]: a value from -1 down to -(2^31-1) is
// -[ErrCode], with a message available from [ExportLastError]; any other value
// packs the pointer (high 32 bits) and length (low 32 bits) of the output in
// guest memory, which stays valid until the next call into the same instance.
// (An output at or above 2 GiB packs to a negative value too, but always below
// -(2^32-1), so it is never mistaken for an error.) Functions whose
// answer is a boolean return it directly as an i32 (1 true, 0 false, negative
// -[ErrCode]).
//
// Records are little-endian and fixed-layout with an offset+length variable
// area (see record.go). A minor version may append fields to a record's fixed
// part; readers ignore fields they do not know and read fields that a shorter
// record lacks as zero.
package abi

import "strings"

// Version of the contract. The host refuses a module whose major differs and
// accepts any minor (records are forward compatible within a major).
//
// Minor versions (this list is the changelog):
//   - 0: pods, nodes, pod groups.
//   - 1: the storage event resources (ResourcePersistentVolume ...
//     ResourceVolumeAttachment, 5-11) with [StorageObject] records; the pod
//     record's claims, ephemeral claims and inline volume drivers. A host
//     answers Queue for a minor-0 QueueingHint module on storage events
//     ([MinorStorage]); a minor-1 module on a minor-0 host cannot register
//     them (the host refuses the unknown resources).
//   - 2: the DRA event resources (ResourceResourceClaim ...
//     ResourceDeviceTaintRule, 12-15) with [StorageObject] records, which
//     gain allocated, reservedFor, pool and device classes; the pod record's
//     resource claims. A host answers Queue for an older QueueingHint module
//     on DRA events ([MinorDRA]).
//   - 3: the placement slots, filter and score ([SlotFilter], [SlotScore]):
//     the [Placement], [NodeSync], [Verdicts] and [PlacementOptions]
//     records (placement.go); the node record's images; the pod record's
//     namespace labels and owner kind. Modules of older minors keep
//     loading in the other slots ([MinorPlacement]).
//   - 4: the pod record's pod affinity and anti-affinity terms (required
//     and preferred), topology spread constraints, the profile's
//     NodeAffinity addedAffinity and the node features the pod needs
//     ([MinorSelectiveHints]), so that QueueingHints can compare them as
//     upstream's do. A record of an older host lacks them
//     ([PodView.TermsKnown] is false): a minor-4 policy must not read their
//     absence as a pod without terms. An older module never reads them and
//     keeps answering as it did; the host needs nothing for it.
const (
	VersionMajor = 1
	VersionMinor = 4
	// Version is what [ExportABIVersion] returns: major<<16 | minor.
	Version = VersionMajor<<16 | VersionMinor
)

// MinorStorage is the first minor whose events include the storage resources
// (StorageObject records) and whose pod records carry claims. The host answers
// Queue for such an event on behalf of an older module instead of sending it
// records it cannot read.
const MinorStorage = 1

// MinorDRA is the first minor whose events include the DRA resources and
// whose pod records carry resource claims; the host answers Queue for such
// an event on behalf of an older module.
const MinorDRA = 2

// MinorPlacement is the first minor with the filter and score slots; a
// module built for an older minor cannot serve them.
const MinorPlacement = 3

// MinorSelectiveHints is the first minor whose pod records carry the pod
// affinity terms, spread constraints, added node affinity and required
// node features ([PodView.TermsKnown]).
const MinorSelectiveHints = 4

// SplitVersion unpacks a value returned by [ExportABIVersion].
func SplitVersion(v uint32) (major, minor uint16) { return uint16(v >> 16), uint16(v) }

// Exports every module has.
const (
	// ExportMemory is the guest's linear memory.
	ExportMemory = "memory"
	// ExportABIVersion: () -> i32, the [Version] the module was built against.
	ExportABIVersion = "wasmsched_abi_version"
	// ExportBuffer: (size i32) -> i32. Returns the address of a guest-owned
	// input buffer of at least size bytes, or 0 if the guest cannot provide it.
	// The buffer stays put until the next ExportBuffer call with a larger size,
	// so the host caches the address and capacity per instance.
	ExportBuffer = "wasmsched_buffer"
	// ExportLastError: () -> i64 [Result] with the UTF-8 message of the last
	// call that returned a negative result.
	ExportLastError = "wasmsched_last_error"
	// ExportInitialize is the reactor initialiser that TinyGo and Go emit for
	// -buildmode=c-shared; the host calls it once per instance when present.
	ExportInitialize = "_initialize"
)

// Slot exports. A module implements a slot by exporting its functions; one
// module may implement several slots.
const (
	// ExportQueueSortLess: (lenA i32, lenB i32) -> i32. Input: the [Pod] record
	// of pod A followed by that of pod B. Returns 1 if A sorts before B.
	ExportQueueSortLess = "wasmsched_queue_sort_less"
	// ExportQueueSortKey: (len i32) -> i64 [Result]. Input: one [Pod] record.
	// Output: a [SortKeySize]-byte [SortKey]. Optional: a module that only
	// implements less returns -[ErrUnsupported] and the host compares with less.
	ExportQueueSortKey = "wasmsched_queue_sort_key"

	// ExportBackoffSortLess, ExportBackoffSortKey: as the queue-sort pair, for
	// the heap of pods backing off after an unschedulable attempt.
	ExportBackoffSortLess = "wasmsched_backoff_sort_less"
	ExportBackoffSortKey  = "wasmsched_backoff_sort_key"
	// ExportBackoffMayPop: (len i32) -> i32. Input: one [Pod] record. Returns 1
	// if the pod may be popped from backoffQ before its backoff ends when
	// activeQ is empty (KEP-5142).
	ExportBackoffMayPop = "wasmsched_backoff_may_pop"

	// ExportPreEnqueue: (len i32) -> i64 [Result]. Input: one [Pod] record.
	// Output: a [Gate] record (admit, or gated with plugin and reason).
	ExportPreEnqueue = "wasmsched_pre_enqueue"

	// ExportHintEvents: () -> i64 [Result]. Output: a [Registrations] record,
	// the (plugin, resource, actions) triples the module wants to hear about.
	ExportHintEvents = "wasmsched_hint_events"
	// ExportQueueingHint: (len i32) -> i64 [Result]. Input: a [HintBatch]
	// record (one event, many pods). Output: one [Hint] byte per pod, in order.
	ExportQueueingHint = "wasmsched_queueing_hint"

	// ExportVictimOrder: (len i32) -> i64 [Result]. Input: a [VictimBatch]
	// record. Output: a permutation of the victim indices as little-endian
	// u32s, most important victim first.
	ExportVictimOrder = "wasmsched_victim_order"

	// ExportNodes: (len i32) -> i32. Input: a [NodeSync] record, the node
	// records the module's instance has not seen at their current
	// generation. The guest keeps them, by id, until replaced or removed;
	// placement calls name nodes by those ids. Returns 0, or -[ErrCode].
	// Required by the filter and score slots (minor 3).
	ExportNodes = "wasmsched_nodes"
	// ExportFilter: (len i32) -> i64 [Result]. Input: a [Placement] record
	// (one pod, the nodes the native filters accepted). Output: a [Verdicts]
	// record, one verdict per node in order.
	ExportFilter = "wasmsched_filter"
	// ExportScore: (len i32) -> i64 [Result]. Input: a [Placement] record
	// (one pod, its feasible nodes). Output: one little-endian i64 score per
	// node, in order.
	ExportScore = "wasmsched_score"
	// ExportPreFilter, ExportPreScore: (len i32) -> i32. Input: one [Pod]
	// record. Return 1 if the slot concerns the pod, 0 to skip it for the
	// pod (the filter passes every node, the score adds nothing), or
	// -[ErrCode]. Optional: without it every pod is filtered and scored.
	ExportPreFilter = "wasmsched_pre_filter"
	ExportPreScore  = "wasmsched_pre_score"
	// ExportPlacementOptions: () -> i64 [Result]. Output: a
	// [PlacementOptions] record. Optional: without it the host uses
	// [DefaultFilterEvents] and normalises scores itself.
	ExportPlacementOptions = "wasmsched_placement_options"
)

// Slot names a policy slot. Its string form is used in config keys, metrics
// labels and messages.
type Slot uint8

const (
	SlotQueueSort Slot = iota
	SlotBackoffSort
	SlotPreEnqueue
	SlotQueueingHint
	SlotVictimOrder
	// SlotFilter and SlotScore are the placement slots (minor 3): a module
	// rejects or ranks the nodes the native filters accepted.
	SlotFilter
	SlotScore
	numSlots
)

// Slots lists every slot in a fixed order.
var Slots = [...]Slot{SlotQueueSort, SlotBackoffSort, SlotPreEnqueue, SlotQueueingHint, SlotVictimOrder, SlotFilter, SlotScore}

var slotNames = [numSlots]string{"queueSort", "backoffSort", "preEnqueue", "queueingHint", "victimOrder", "filter", "score"}

// Placement reports whether s is a placement slot (filter or score): one
// that may be empty (no module, the plugin does nothing) and that a module
// of a minor before [MinorPlacement] cannot serve.
func (s Slot) Placement() bool { return s == SlotFilter || s == SlotScore }

func (s Slot) String() string {
	if s < numSlots {
		return slotNames[s]
	}
	return "unknown"
}

// SlotNames lists the slots' names in the order of Slots, comma-separated,
// for messages that say which slots there are.
func SlotNames() string { return strings.Join(slotNames[:], ", ") }

// ParseSlot is the inverse of Slot.String.
func ParseSlot(name string) (Slot, bool) {
	for i, n := range slotNames {
		if n == name {
			return Slot(i), true
		}
	}
	return 0, false
}

// slotExports is the export list of each slot: the functions a module must
// export to implement it, and its optional sort-key export. A new slot is a
// row here (and a row of host/policy's slot table).
var slotExports = [numSlots]struct {
	required []string
	key      string
}{
	SlotQueueSort:    {required: []string{ExportQueueSortLess}, key: ExportQueueSortKey},
	SlotBackoffSort:  {required: []string{ExportBackoffSortLess, ExportBackoffMayPop}, key: ExportBackoffSortKey},
	SlotPreEnqueue:   {required: []string{ExportPreEnqueue}},
	SlotQueueingHint: {required: []string{ExportHintEvents, ExportQueueingHint}},
	SlotVictimOrder:  {required: []string{ExportVictimOrder}},
	SlotFilter:       {required: []string{ExportNodes, ExportFilter}},
	SlotScore:        {required: []string{ExportNodes, ExportScore}},
}

// RequiredExports are the functions a module must export to implement a slot.
// Optional exports (sort keys) are not listed. The slice is the caller's.
func (s Slot) RequiredExports() []string {
	if s >= numSlots {
		return nil
	}
	return append([]string(nil), slotExports[s].required...)
}

// KeyExport is the optional sort-key export of a sort slot, or "".
func (s Slot) KeyExport() string {
	if s >= numSlots {
		return ""
	}
	return slotExports[s].key
}

// ErrCode is a guest-reported failure, returned negated.
type ErrCode int32

const (
	// ErrDecode: the guest could not decode its input.
	ErrDecode ErrCode = 1
	// ErrPolicy: the policy itself failed (its message says why).
	ErrPolicy ErrCode = 2
	// ErrUnsupported: the module does not implement this optional function.
	ErrUnsupported ErrCode = 3
	// ErrBuffer: the guest could not provide a buffer of the requested size.
	ErrBuffer ErrCode = 4
)

func (c ErrCode) String() string {
	switch c {
	case ErrDecode:
		return "decode"
	case ErrPolicy:
		return "policy"
	case ErrUnsupported:
		return "unsupported"
	case ErrBuffer:
		return "buffer"
	}
	return "unknown"
}

// Result is the i64 returned by slot functions that produce bytes.
type Result int64

// PackResult builds the Result for output at ptr of length n.
func PackResult(ptr, n uint32) Result { return Result(int64(ptr)<<32 | int64(n)) }

// ErrResult builds the Result for a failure.
func ErrResult(c ErrCode) Result { return Result(-int64(c)) }

// maxErrCode is the largest code an error [Result] can carry.
const maxErrCode = 1<<31 - 1

// Unpack returns the output location, or the error code when the result is
// an error (ok is then false). Errors are -1 down to -maxErrCode. A pointer at
// or above 2 GiB also packs to a negative value, but the output must fit below
// 4 GiB, so ptr+n <= 2^32 keeps that value at or below -(2^32-1): every output
// of a 4 GiB memory unpacks as one.
func (r Result) Unpack() (ptr, n uint32, code ErrCode, ok bool) {
	if r < 0 && r >= -maxErrCode {
		return 0, 0, ErrCode(-r), false
	}
	return uint32(uint64(r) >> 32), uint32(r), 0, true
}

// ValType is a Wasm value type in an export signature.
type ValType byte

const (
	I32 ValType = 0x7f
	I64 ValType = 0x7e
)

// Signature of an exported function.
type Signature struct{ Params, Results []ValType }

var (
	sigVoidI32    = Signature{Results: []ValType{I32}}
	sigVoidI64    = Signature{Results: []ValType{I64}}
	sigI32I32     = Signature{Params: []ValType{I32}, Results: []ValType{I32}}
	sigI32I64     = Signature{Params: []ValType{I32}, Results: []ValType{I64}}
	sigI32I32to32 = Signature{Params: []ValType{I32, I32}, Results: []ValType{I32}}
)

// ExportSignature returns the signature the contract requires of a function
// export, and false for a name the contract does not define.
func ExportSignature(name string) (Signature, bool) {
	switch name {
	case ExportABIVersion:
		return sigVoidI32, true
	case ExportBuffer, ExportBackoffMayPop, ExportNodes, ExportPreFilter, ExportPreScore:
		return sigI32I32, true
	case ExportLastError, ExportHintEvents, ExportPlacementOptions:
		return sigVoidI64, true
	case ExportQueueSortLess, ExportBackoffSortLess:
		return sigI32I32to32, true
	case ExportQueueSortKey, ExportBackoffSortKey, ExportPreEnqueue, ExportQueueingHint, ExportVictimOrder,
		ExportFilter, ExportScore:
		return sigI32I64, true
	case ExportInitialize:
		return Signature{}, true
	}
	return Signature{}, false
}

// RequiredExports are the function exports every module must have, whatever
// slots it implements (besides the memory export).
var RequiredExports = []string{ExportABIVersion, ExportBuffer, ExportLastError}

// ExportPrefix starts every contract export name except the reactor
// initialiser; the host warns about unknown names with this prefix (a module
// built against a newer minor version).
const ExportPrefix = "wasmsched_"
