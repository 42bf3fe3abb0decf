package sandbox

import (
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/landlock"
)

// startProxyProcess starts p.cmd, lnk-netbroker at netbrokerPath, and a
// goroutine waiting for it (p.wait).
//
// On a kernel with landlock but without its TSYNC (ABI 1–7), a Go program
// can confine only the thread it runs on, so lnk-netbroker alone would
// confine itself, then execute itself once more from that thread for
// every thread to be born inside its domain: two starts of the program.
// Instead lnk starts it from a thread of its own already under the
// proxy's domain (netbroker.ConfineRules, the very rules lnk-netbroker
// applies, and read and execute on lnk-netbroker, which is static: no
// loader or library to read), with landlock.BornConfined in its
// environment and the sockets' folder handed as an fd
// (netbroker.NetDirEnv); every thread it will have is born in the
// domain, it confines its own thread once more and starts once. That
// thread, locked, never runs anything else of lnk's: it waits for the
// proxy and ends with it, so the proxy's parent-death signal (set from
// it) still fires only when lnk is gone. Where this cannot be done
// (no landlock, TSYNC, a rule that fails), the proxy starts as before.
func startProxyProcess(p *Proxy, home, netbrokerPath string) error {
	if abi := landlock.ABI(); abi == 0 || abi >= 8 {
		return startAndWait(p)
	}
	netDir, err := netbroker.OpenNetDir(home)
	if err != nil {
		return err
	}
	defer netDir.Close()
	// What exec.Cmd would open itself on the confined thread, which may
	// no longer: /dev/null for its stdout.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	exe, err := unix.Open(netbrokerPath, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return startAndWait(p)
	}
	rules, fds := netbroker.ConfineRules(int(netDir.Fd()))
	fds = append(fds, exe)
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	rules = append(rules, landlock.Beneath(exe, landlock.Read|landlock.Exec))
	cmd := p.cmd
	if cmd.Stdout == nil {
		cmd.Stdout = null
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: this thread is confined as the proxy and ends
		// with this goroutine, once the proxy has ended.
		runtime.LockOSThread()
		if _, err := landlock.RestrictThread(rules...); err == nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, netDir)
			cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)],
				landlock.BornConfined, netbroker.NetDirEnv+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
		}
		if err := cmd.Start(); err != nil {
			errc <- err
			return
		}
		errc <- nil
		p.wait()
	}()
	return <-errc
}

// startAndWait starts p.cmd from the calling thread and waits for it
// beside.
func startAndWait(p *Proxy) error {
	if err := p.cmd.Start(); err != nil {
		return err
	}
	go p.wait()
	return nil
}
