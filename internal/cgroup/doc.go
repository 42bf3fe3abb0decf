// Package cgroup finds the cgroup this process may make children in for
// a sandbox's memory bound, and makes, enters and removes them.
//
// A cgroup is "delegated" when this process's own cgroup (from
// /proc/self/cgroup) is a folder, under the matching cgroup mount (from
// /proc/self/mountinfo), owned by the user running lnk and holding the
// memory controller: cgroup v2's unified hierarchy, or v1's memory one.
// Where none is, Delegated says why and lnk bounds no memory. Every
// file is opened without following a link, relative to a held folder.
package cgroup
