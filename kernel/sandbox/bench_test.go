package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// BenchmarkSandboxRunTrue times `lnk sandbox run -- /bin/true` with the
// full layering and no network against bare bubblewrap in the same run,
// interleaved, and reports medians and their ratio (target: 1.5).
//
// Beside them, in the same interleaved run, the floor: a Go hello-world
// (built static, as lnk and lnk-init are) and `lnk --help`. Two Go
// programs start in series on this path (lnk, then lnk-init inside), so
// floor-x-baseline, (bare + 2 × hello) / bare, is the best ratio any Go
// lnk with a Go first stage can reach on this machine; link-over-floor is
// what Link adds beyond it.
func BenchmarkSandboxRunTrue(b *testing.B) {
	requireBench(b)
	lnkBin := testenv.Bin(b, "lnk")
	testenv.Bin(b, "lnk-init")
	hello := testenv.GoHello(b)
	ds := sampleInterleaved(b, [][]string{
		{lnkBin, "sandbox", "run", "--internet=false", "--command", "true", "--", "/bin/true"},
		bareBwrap,
		{hello},
		{lnkBin, "--help"},
	})
	link, base, h, help := median(ds[0]), median(ds[1]), median(ds[2]), median(ds[3])
	report(b, link, base)
	floor := base + 2*h
	b.ReportMetric(h, "gohello-ns/op")
	b.ReportMetric(help, "lnkhelp-ns/op")
	b.ReportMetric(floor/base, "floor-x-baseline")
	b.ReportMetric(link/floor, "link-over-floor")
}

// BenchmarkSandboxRunTrueWithRelay is the same with [internet] on: lnk
// readies the proxy, starts bubblewrap, then lnk-netbroker beside
// bubblewrap's setup (once: lnk starts it already confined,
// proxyconfined.go), and lnk-init hands the proxy its listener (target:
// 2). On 2 cores the proxy still competes for CPU with the sandbox, and
// lnk waits for it to stop at the end. The floor counts three Go starts:
// lnk, lnk-init and lnk-netbroker, as if in series.
func BenchmarkSandboxRunTrueWithRelay(b *testing.B) {
	requireBench(b)
	lnkBin := testenv.Bin(b, "lnk")
	testenv.Bin(b, "lnk-init")
	testenv.Bin(b, "lnk-netbroker")
	ds := sampleInterleaved(b, [][]string{
		{lnkBin, "sandbox", "run", "--command", "true", "--", "/bin/true"},
		bareBwrap,
		{testenv.GoHello(b)},
	})
	link, base, h := median(ds[0]), median(ds[1]), median(ds[2])
	report(b, link, base)
	floor := base + 3*h
	b.ReportMetric(h, "gohello-ns/op")
	b.ReportMetric(floor/base, "floor-x-baseline")
	b.ReportMetric(link/floor, "link-over-floor")
}

// bareBwrap is the baseline the issue names.
var bareBwrap = []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true"}

// samples is how many runs of each command a benchmark times, whatever
// b.N is (one run takes tens of milliseconds, so the framework stops at
// b.N = 1): LNK_BENCH_SAMPLES, 15 by default.
func samples(b *testing.B) int {
	n := 15
	if v, err := strconv.Atoi(os.Getenv("LNK_BENCH_SAMPLES")); err == nil && v > 0 {
		n = v
	}
	return max(n, b.N)
}

// sampleInterleaved runs each command once to warm up, then times them in
// turn, samples(b) rounds, so a change in the machine's load falls on
// every one alike. It returns each command's times.
func sampleInterleaved(b *testing.B, cmds [][]string, env ...string) [][]time.Duration {
	for _, c := range cmds {
		timeRun(b, c, env...)
	}
	ds := make([][]time.Duration, len(cmds))
	for i := samples(b); i > 0; i-- {
		for j, c := range cmds {
			ds[j] = append(ds[j], timeRun(b, c, env...))
		}
	}
	return ds
}

// BenchmarkSandboxProcesses counts Link's processes beside the command
// and their peak memory, against bare bubblewrap's; lnk-maxrss-MiB is
// lnk's own peak before it execs bubblewrap.
func BenchmarkSandboxProcesses(b *testing.B) {
	requireBench(b)
	lnkBin := testenv.Bin(b, "lnk")
	testenv.Bin(b, "lnk-init")
	var procs, peak, baseProcs, basePeak, lnkPeak float64
	for i := 0; i < b.N; i++ {
		mark := "3600." + strconv.Itoa(os.Getpid()) + strconv.Itoa(i)
		procs, peak = measureTree(b, []string{lnkBin, "sandbox", "run", "--internet=false", "--command", "sleep", "--", "sleep", mark}, mark)
		lnkPeak = lastMaxRSS
		baseProcs, basePeak = measureTree(b, []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "sleep", mark}, mark)
	}
	b.ReportMetric(procs, "link-procs")
	b.ReportMetric(baseProcs, "base-procs")
	b.ReportMetric(peak, "link-peak-MiB")
	b.ReportMetric(basePeak, "base-peak-MiB")
	b.ReportMetric(lnkPeak, "lnk-maxrss-MiB")
	b.ReportMetric(peak/basePeak, "x-baseline")
}

func requireBench(b *testing.B) {
	_, err := exec.LookPath("bwrap")
	testenv.Require(b, err == nil, "bubblewrap (bwrap)")
	testenv.Home(b)
}

func timeRun(b *testing.B, argv []string, env ...string) time.Duration {
	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.WaitDelay = 20 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return time.Since(start)
}

func median(d []time.Duration) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Nanoseconds())
}

func report(b *testing.B, link, base float64) {
	b.ReportMetric(link, "link-ns/op")
	b.ReportMetric(base, "base-ns/op")
	b.ReportMetric(link/base, "x-baseline")
}

// measureTree starts argv (whose command is `sleep mark`), waits until
// the sleep runs, then counts the processes between it and argv's pid and
// sums their peak memory (VmHWM) in MiB. (lnk itself has exec'd into
// bubblewrap by then; its own peak is BenchmarkSandboxRunTrue's business.)
func measureTree(b *testing.B, argv []string, mark string) (float64, float64) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var tree []int
	deadline := time.Now().Add(30 * time.Second)
	for {
		tree = descendants(cmd.Process.Pid)
		if len(tree) > 0 && isSleep(tree[len(tree)-1], mark) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%v did not start", argv)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var kib float64
	for _, p := range append([]int{cmd.Process.Pid}, tree[:len(tree)-1]...) {
		kib += hwm(p)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		lastMaxRSS = float64(ru.Maxrss) / 1024
	}
	return float64(len(tree)), kib / 1024 // the starting process and its descendants, less the command
}

// lastMaxRSS is the starting process's lifetime peak in MiB (ru_maxrss
// spans its exec: for lnk, its own peak before it became bubblewrap).
var lastMaxRSS float64

// descendants lists pid's descendants, depth first, children in order.
func descendants(pid int) []int {
	var out []int
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	for _, f := range strings.Fields(string(b)) {
		c, _ := strconv.Atoi(f)
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

func isSleep(pid int, mark string) bool {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return string(b) == "sleep\x00"+mark+"\x00"
}

func hwm(pid int) float64 {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			v, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return v
		}
	}
	return 0
}
