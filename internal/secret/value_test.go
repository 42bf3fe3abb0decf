package secret

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

const plain = "sk-test-0123456789abcdef"

func newValue(t *testing.T) *Value {
	t.Helper()
	v, err := New([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Destroy)
	return v
}

func TestNewZeroesItsSource(t *testing.T) {
	src := []byte(plain)
	v, err := New(src)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy()
	if !bytes.Equal(src, make([]byte, len(src))) {
		t.Fatalf("New left the source bytes in place")
	}
	if string(v.Bytes()) != plain || v.Len() != len(plain) {
		t.Fatalf("value does not hold what was given")
	}
}

// TestNeverPrints runs the value through every way Go code prints a
// thing: fmt verbs, errors, JSON, slog, a recovered panic.
func TestNeverPrints(t *testing.T) {
	v := newValue(t)
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%-20v"} {
		outs = append(outs, fmt.Sprintf(verb, v))
	}
	outs = append(outs, fmt.Sprint(v), fmt.Sprintln(v), v.String())
	outs = append(outs, fmt.Errorf("wrapping %v: %w", v, errors.New("cause")).Error())
	type holder struct {
		Name  string
		Value *Value
	}
	outs = append(outs, fmt.Sprintf("%+v", holder{"k", v}), fmt.Sprintf("%#v", holder{"k", v}))
	j, err := json.Marshal(holder{"k", v})
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(j))
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("secret", "value", v, "held", holder{"k", v})
	slog.New(slog.NewTextHandler(&logged, nil)).Info("secret", "value", v)
	outs = append(outs, logged.String())
	outs = append(outs, panicMessage(func() { panic(v) }), panicMessage(func() { panic(fmt.Sprint("bad ", v)) }))
	for _, o := range outs {
		if strings.Contains(o, plain) || strings.Contains(o, fmt.Sprintf("%x", plain)) {
			t.Errorf("printed the value: %q", o)
		}
		if !strings.Contains(o, Redacted) {
			t.Errorf("printed without the redaction mark: %q", o)
		}
	}
}

func panicMessage(f func()) (msg string) {
	defer func() { msg = fmt.Sprint(recover()) }()
	f()
	return ""
}

func TestEqualIsExact(t *testing.T) {
	v := newValue(t)
	if !v.Equal([]byte(plain)) {
		t.Fatal("Equal refused the same value")
	}
	for _, o := range []string{"", plain[:5], plain + "x", strings.ToUpper(plain)} {
		if v.Equal([]byte(o)) {
			t.Errorf("Equal took %q", o)
		}
	}
}

func TestDestroyZeroesAndForgets(t *testing.T) {
	v, err := New([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	p := v.mem
	buf := p.buf
	// Zero without unmapping, to look at the pages afterwards.
	clear(buf)
	if !bytes.Equal(buf, make([]byte, len(buf))) {
		t.Fatal("pages not zeroed")
	}
	v.Destroy()
	v.Destroy()
	if v.Bytes() != nil || v.Len() != 0 || v.Equal([]byte(plain)) {
		t.Fatal("a destroyed value still answers")
	}
	var nilV *Value
	if nilV.Bytes() != nil || nilV.Len() != 0 || nilV.String() != Redacted {
		t.Fatal("a nil value is not empty")
	}
}

// TestKeptOutOfCoreDumps reads the kernel's own account of the mapping:
// VmFlags "dd" (MADV_DONTDUMP), "wf" (MADV_WIPEONFORK) and, when mlock
// succeeded, "lo".
func TestKeptOutOfCoreDumps(t *testing.T) {
	v := newValue(t)
	addr := uint64(uintptr(unsafe.Pointer(&v.Bytes()[0])))
	flags := vmFlags(t, addr)
	if !strings.Contains(" "+flags+" ", " dd ") {
		t.Errorf("secret's mapping lacks MADV_DONTDUMP: VmFlags %q", flags)
	}
	if !strings.Contains(" "+flags+" ", " wf ") {
		t.Errorf("secret's mapping lacks MADV_WIPEONFORK: VmFlags %q", flags)
	}
	if v.Locked() != strings.Contains(" "+flags+" ", " lo ") {
		t.Errorf("Locked()=%v but VmFlags %q", v.Locked(), flags)
	}
}

func vmFlags(t *testing.T, addr uint64) string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	in := false
	for s.Scan() {
		line := s.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && a <= addr && addr < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return ""
}

// TestDroppedValueIsWiped: a Value dropped without Destroy is zeroed and
// unmapped once the collector finds it: its DONTDUMP mapping goes away.
func TestDroppedValueIsWiped(t *testing.T) {
	addr := func() uint64 {
		v, err := New([]byte(plain))
		if err != nil {
			t.Fatal(err)
		}
		a := uint64(uintptr(unsafe.Pointer(&v.Bytes()[0])))
		if !hasDontDump(t, a) {
			t.Fatal("a live secret's mapping lacks MADV_DONTDUMP")
		}
		runtime.KeepAlive(v)
		return a
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runtime.GC()
		if !hasDontDump(t, addr) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a dropped secret's pages are still mapped after 20 s of collections")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasDontDump(t *testing.T, addr uint64) bool {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	in := false
	for s.Scan() {
		line := s.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && a <= addr && addr < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Contains(" "+line+" ", " dd ")
		}
	}
	return false
}
