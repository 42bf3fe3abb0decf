package cgroup

import (
	"strconv"
	"strings"
)

// ownPath is this process's cgroup path (as the kernel writes it in
// /proc/self/cgroup, text) on v2 (the "0::" line) and on v1's memory
// hierarchy ("N:memory:" or "N:a,memory:"): "" where there is none.
func ownPath(text string) (v2, v1 string) {
	for _, line := range strings.Split(text, "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		ctrls, path, ok := strings.Cut(rest, ":")
		if !ok || !strings.HasPrefix(path, "/") {
			continue
		}
		switch {
		case id == "0" && ctrls == "":
			v2 = path
		case ctrls != "" && hasWord(ctrls, ",", "memory"):
			v1 = path
		}
	}
	return v2, v1
}

// mount is one cgroup mount of /proc/self/mountinfo.
type mount struct {
	root, point string // the mount's root in the hierarchy, and where it is
}

// mounts finds, in mountinfo's text, the cgroup2 mount and the v1 mount
// holding the memory controller (the first of each).
func mounts(text string) (v2, v1 mount, ok2, ok1 bool) {
	for _, line := range strings.Split(text, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		root, rok := unescape(f[3])
		point, pok := unescape(f[4])
		if !rok || !pok || !strings.HasPrefix(root, "/") || !strings.HasPrefix(point, "/") {
			continue
		}
		m := mount{root: root, point: point}
		switch {
		case g[0] == "cgroup2" && !ok2:
			v2, ok2 = m, true
		case g[0] == "cgroup" && !ok1 && hasWord(g[2], ",", "memory"):
			v1, ok1 = m, true
		}
	}
	return v2, v1, ok2, ok1
}

// folder is where cgroup path p is under mount m: "" where p is not
// inside the mount's root (another cgroup namespace's).
func folder(m mount, p string) string {
	rel := p
	if m.root != "/" {
		if p != m.root && !strings.HasPrefix(p, m.root+"/") {
			return ""
		}
		rel = p[len(m.root):]
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." || part == "." {
			return ""
		}
	}
	return strings.TrimSuffix(m.point, "/") + strings.TrimSuffix(rel, "/")
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+4 > len(s) {
			return "", false
		}
		n, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(n))
		i += 3
	}
	return b.String(), true
}

// hasWord reports whether list, split at sep, holds w.
func hasWord(list, sep, w string) bool {
	for _, x := range strings.Split(list, sep) {
		if strings.TrimSpace(x) == w {
			return true
		}
	}
	return false
}
