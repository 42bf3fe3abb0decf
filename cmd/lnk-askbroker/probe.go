package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// probeConfinement tries, once confined, what the confinement must
// refuse and what it must still allow, and prints one "name: allowed" or
// "name: refused (why)" line for each, for the tests to read.
func probeConfinement(dialog string) error {
	report := func(name string, err error) {
		if err == nil {
			fmt.Printf("%s: allowed\n", name)
		} else {
			fmt.Printf("%s: refused (%v)\n", name, err)
		}
	}
	home := os.Getenv("HOME")
	fd, err := unix.Open(filepath.Join(home, "probe-written"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
	}
	report("write-home", err)
	fd, err = unix.Openat(storeFD, ".probe", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
		unix.Unlinkat(storeFD, ".probe", 0)
	}
	report("write-store", err)
	_, err = os.ReadFile("/etc/hostname")
	report("read-etc", err)
	_, err = os.ReadDir(home)
	report("read-home", err)
	report("exec-other", tryExec("/bin/true"))
	if dialog != "" {
		report("exec-dialog", tryExec(dialog))
	}
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	report("socket-inet", err)
	fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	report("socket-unix", err)
	return nil
}

// tryExec forks and execs path with --version, reporting only whether the
// exec itself was allowed.
func tryExec(path string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	p, err := os.StartProcess(path, []string{path, "--version"}, &os.ProcAttr{Files: []*os.File{nil, w, w}})
	w.Close()
	if err != nil {
		return err
	}
	p.Kill()
	p.Wait()
	return nil
}
