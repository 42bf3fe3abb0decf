package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/extract"
)

// A document's child is given no environment: while it works on a
// document that keeps it busy (one inflating past its limits), its
// /proc/PID/environ is read back empty, though this process holds a
// secret in its own (the positive control: the secret is in ours).
func TestExtractChildHasNoEnvironment(t *testing.T) {
	t.Setenv("LNK_TEST_SECRET", "kumquat-secret")
	if !strings.Contains(strings.Join(os.Environ(), "\n"), "kumquat-secret") {
		t.Fatal("the secret is not in this process's environment")
	}
	exe := testenv.Bin(t, "lnk-memory")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		extract.Run(ctx, exe, "pdf", bombPDF(t))
	}()
	defer func() { cancel(); <-done }()
	me := strconv.Itoa(os.Getpid())
	for {
		select {
		case <-done:
			t.Fatal("the child ended before its environment was read")
		default:
		}
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(f) < 2 || f[1] != me {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if !bytes.HasSuffix(cmdline, []byte("\x00extract\x00pdf\x00")) {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue // gone, or not yet exec'd
			}
			if len(env) != 0 {
				t.Fatalf("the child's environment: %q", env)
			}
			return
		}
	}
}
