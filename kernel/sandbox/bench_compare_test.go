package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// BenchmarkSandboxCompare runs /bin/true in Link's sandbox (full
// layering, no network) beside bare bubblewrap, firejail, `codex sandbox`
// (npm @openai/codex) and srt (npm @anthropic-ai/sandbox-runtime), all
// interleaved in one run, and reports each one's median with its ratio
// to Link's (srt/link-x 10 means Link is 10 times faster). scripts/
// bench.sh installs the others into a cache outside the repository
// (LNK_BENCH_CACHE) where missing; one that is missing or cannot run
// here is left out, and the benchmark says why ("not measured: …").
func BenchmarkSandboxCompare(b *testing.B) {
	requireBench(b)
	lnkBin := testenv.Bin(b, "lnk")
	testenv.Bin(b, "lnk-init")
	cache := os.Getenv("LNK_BENCH_CACHE")
	// codex refuses a home under /tmp (where testenv.Home is), so the
	// others get a home of their own in the cache, or under /var/tmp.
	home := filepath.Join(cache, "home")
	if cache == "" {
		var err error
		if home, err = os.MkdirTemp("/var/tmp", "lnk-bench-home-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(home) })
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		b.Fatal(err)
	}
	env := []string{"HOME=" + home}
	names := []string{"link", "bwrap"}
	cmds := [][]string{{lnkBin, "sandbox", "run", "--internet=false", "--command", "true", "--", "/bin/true"}, bareBwrap}
	for _, o := range []struct{ name, bin string }{
		{"firejail", "firejail"}, {"codex", "codex"}, {"srt", "srt"},
	} {
		argv, why := other(o.bin, cache, env)
		if why != "" {
			fmt.Printf("BenchmarkSandboxCompare: %s not measured: %s\n", o.name, why)
			continue
		}
		names, cmds = append(names, o.name), append(cmds, argv)
	}
	ds := sampleInterleaved(b, cmds, env...)
	link := median(ds[0])
	b.ReportMetric(link, "link-ns/op")
	for i := 1; i < len(cmds); i++ {
		m := median(ds[i])
		b.ReportMetric(m, names[i]+"-ns/op")
		if names[i] == "bwrap" {
			b.ReportMetric(link/m, "x-baseline")
		} else {
			b.ReportMetric(m/link, names[i]+"/link-x")
		}
	}
}

// other is the command running /bin/true in another sandbox, or why it
// can't be measured here.
func other(bin, cache string, env []string) ([]string, string) {
	path, err := exec.LookPath(bin)
	if err != nil && cache != "" {
		path = filepath.Join(cache, "npm", "node_modules", ".bin", bin)
		if _, err = os.Stat(path); err != nil {
			return nil, bin + " is not installed (on PATH or in " + filepath.Dir(path) + ")"
		}
	} else if err != nil {
		return nil, bin + " is not on PATH and LNK_BENCH_CACHE is unset (scripts/bench.sh installs it)"
	}
	var argv []string
	switch bin {
	case "firejail":
		argv = []string{path, "--quiet", "--noprofile", "--net=none", "/bin/true"}
	case "codex":
		argv = []string{path, "sandbox", "/bin/true"}
	case "srt":
		argv = []string{path, "/bin/true"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 20 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("%s fails here: %v: %s", bin, err, strings.Join(strings.Fields(string(out)), " "))
	}
	return argv, ""
}
