package testenv

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// stopKernels stops each kernel (`lnk kernel run`) of this uid whose HOME
// is home: one lnk started on demand (an agent's sandbox, lnk kernel
// start) runs in a session of its own and would outlive its test, and
// its HOME. SIGTERM first, so it stops in order; SIGKILL after 10 s.
func stopKernels(home string) {
	pids := kernelsOf(home)
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for running(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if running(p) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// kernelsOf lists the processes of this uid running "… kernel run" with
// HOME=home in their environment.
func kernelsOf(home string) []int {
	ents, _ := os.ReadDir("/proc")
	want := []byte("HOME=" + home)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasSuffix(cl, []byte("\x00kernel\x00run\x00")) {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue // another uid's
		}
		for _, v := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(v, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i > 0 && len(st) > i+2 && st[i+2] != 'Z'
}
