package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// probeConfinement tries, once confined, what the confinement must
// refuse and what it must still allow, and prints one "name: allowed" or
// "name: refused (why)" line for each, for the tests to read.
func probeConfinement() error {
	report := func(name string, err error) {
		if err == nil {
			fmt.Printf("%s: allowed\n", name)
		} else {
			fmt.Printf("%s: refused (%v)\n", name, err)
		}
	}
	home := os.Getenv("HOME")
	fd, err := unix.Openat(defsFD, "probe.json", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	report("read-defs", err)
	fd, err = unix.Openat(defsFD, "probe-written", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
	}
	report("write-defs", err)
	_, err = os.ReadDir(home)
	report("read-home", err)
	_, err = os.ReadFile(filepath.Join(home, ".lnk", "secret-probe"))
	report("read-lnk", err)
	_, err = os.ReadFile("/etc/hostname")
	report("read-etc", err)
	for _, p := range []struct {
		name   string
		family int
	}{{"socket-unix", unix.AF_UNIX}, {"socket-inet", unix.AF_INET}} {
		fd, err = unix.Socket(p.family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		report(p.name, err)
	}
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err == nil && d != 0 {
		err = fmt.Errorf("dumpable %d", d)
	}
	report("undumpable", err)
	// Last: an exec allowed replaces this process, and its line is missing.
	report("exec", syscall.Exec("/bin/true", []string{"true"}, nil))
	return nil
}
