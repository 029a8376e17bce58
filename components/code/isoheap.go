// The heap guard: an allocation the memory limit refuses ends the run.
//
// QuickJS answers a refused allocation by throwing an InternalError, which a
// script can catch (or a promise handler, Promise.allSettled or a finally
// block can swallow) and carry on, and in a few places by ignoring the
// failure. So the error the script sees cannot be what decides the limit.
// The guard sits under the engine instead: it replaces the runtime's
// allocation functions with ones that call QuickJS's own and, when one
// returns nothing, record the refusal and interrupt the VM. decide then turns
// whatever the script does next into the memory limit's error.
//
// modernc.org/quickjs does not export the runtime, so the guard finds it by
// reflection (VM.state.runtime.cRuntime) and checks that what it finds holds
// QuickJS's default allocator. If either fails (a new version of the
// package), isoGuardHeap returns an error and Run runs nothing:
// TestIsolateHeapGuard fails rather than the limit quietly going soft.

package code

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// isoHeap is one run's record of refusals.
type isoHeap struct {
	vm      *quickjs.VM
	refused atomic.Bool
	size    atomic.Uint64 // bytes the first refused allocation asked for
}

// refusal describes the first refused allocation, "" when there was none.
func (h *isoHeap) refusal() (string, bool) {
	if !h.refused.Load() {
		return "", false
	}
	return fmt.Sprintf("an allocation of %d bytes was refused", h.size.Load()), true
}

var (
	isoHeapsMu sync.Mutex
	isoHeaps   = map[uintptr]*isoHeap{} // by the address of a runtime's JSMallocState

	// QuickJS's own allocation functions, which the guards call. They are the
	// same for every runtime (JS_NewRuntime's defaults), and set once.
	isoLibOnce             sync.Once
	isoLibMalloc           uintptr
	isoLibRealloc          uintptr
	isoGuardMallocAddress  = isoFuncAddress(isoGuardMalloc)
	isoGuardReallocAddress = isoFuncAddress(isoGuardRealloc)
)

// isoFuncAddress is how the transpiled engine stores a function pointer: the
// address of the Go func value (static for a top-level function).
func isoFuncAddress(f any) uintptr {
	return (*[2]uintptr)(unsafe.Pointer(&f))[1]
}

func isoGuardMalloc(tls *libc.TLS, state uintptr, size lib.Tsize_t) uintptr {
	p := (*(*func(*libc.TLS, uintptr, lib.Tsize_t) uintptr)(unsafe.Pointer(&isoLibMalloc)))(tls, state, size)
	if p == 0 {
		isoRefused(state, size)
	}
	return p
}

func isoGuardRealloc(tls *libc.TLS, state, ptr uintptr, size lib.Tsize_t) uintptr {
	p := (*(*func(*libc.TLS, uintptr, uintptr, lib.Tsize_t) uintptr)(unsafe.Pointer(&isoLibRealloc)))(tls, state, ptr, size)
	if p == 0 && size > 0 {
		isoRefused(state, size)
	}
	return p
}

func isoRefused(state uintptr, size lib.Tsize_t) {
	isoHeapsMu.Lock()
	h := isoHeaps[state]
	isoHeapsMu.Unlock()
	if h == nil {
		return // a runtime the guard no longer watches (closing)
	}
	if h.refused.CompareAndSwap(false, true) {
		h.size.Store(uint64(size))
	}
	h.vm.Interrupt()
}

// isoGuardHeap puts the guard under vm's runtime. release stops watching it;
// call it after vm.Close.
func isoGuardHeap(vm *quickjs.VM) (h *isoHeap, release func(), err error) {
	rt, err := isoRuntime(vm)
	if err != nil {
		return nil, nil, fmt.Errorf("code: cannot guard the VM's heap: %w", err)
	}
	mf := &rt.Fmalloc_ctx.Fmf
	isoLibOnce.Do(func() { isoLibMalloc, isoLibRealloc = mf.Fjs_malloc, mf.Fjs_realloc })
	if mf.Fjs_malloc != isoLibMalloc || mf.Fjs_realloc != isoLibRealloc || isoLibMalloc == 0 || isoLibRealloc == 0 {
		return nil, nil, errors.New("code: cannot guard the VM's heap: its runtime does not use QuickJS's default allocator")
	}
	state := uintptr(unsafe.Pointer(&rt.Fmalloc_ctx.Fmalloc_state))
	h = &isoHeap{vm: vm}
	isoHeapsMu.Lock()
	isoHeaps[state] = h
	isoHeapsMu.Unlock()
	mf.Fjs_malloc, mf.Fjs_realloc = isoGuardMallocAddress, isoGuardReallocAddress
	return h, func() {
		isoHeapsMu.Lock()
		if isoHeaps[state] == h {
			delete(isoHeaps, state)
		}
		isoHeapsMu.Unlock()
	}, nil
}

// isoRuntime finds vm's JSRuntime, which lives in the engine's C heap.
func isoRuntime(vm *quickjs.VM) (*lib.TJSRuntime, error) {
	r := reflect.ValueOf(vm).Elem().FieldByName("runtime")
	if !r.IsValid() || r.Kind() != reflect.Pointer || r.IsNil() {
		return nil, errors.New("modernc.org/quickjs's VM has no runtime field")
	}
	c := r.Elem().FieldByName("cRuntime")
	if !c.IsValid() || c.Kind() != reflect.Uintptr || c.Uint() == 0 {
		return nil, errors.New("modernc.org/quickjs's runtime has no cRuntime field")
	}
	// The address is of C memory (modernc.org/libc's heap), which Go's
	// collector neither moves nor frees.
	return (*lib.TJSRuntime)(unsafe.Add(nil, uintptr(c.Uint()))), nil
}
