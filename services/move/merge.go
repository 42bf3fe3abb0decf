package move

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
)

// mergeFiles moves the staging files folder into the agent's Home:
// incoming files overwrite, nothing there is deleted. Each name is moved
// from the folder holding it, opened through no link: a link there in a
// folder's place is replaced, never written through.
func (p *placing) mergeFiles(stage, agent folder, note func(string)) error {
	src, err := ownerfile.OpenDir(stage.fd, "files", unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(src)
	dst, err := ownerfile.OpenDir(agent.fd, "Home", unix.O_PATH)
	if err != nil {
		return fmt.Errorf("opening the agent's files folder: %w", err)
	}
	defer unix.Close(dst)
	return p.mergeDir(folder{src, stage.rel + "/files"}, folder{dst, agent.rel + "/Home"}, "files", 0, note)
}

func (p *placing) mergeDir(src, dst folder, path string, depth int, note func(string)) error {
	if depth > moveentry.MaxDepth {
		return fmt.Errorf("%w: %s", moveentry.ErrDepth, path)
	}
	names, err := readNames(src.fd)
	if err != nil {
		return err
	}
	// The names not here at all are moved last, together (renameAll).
	var absent []string
	for _, n := range names {
		var s, d unix.Stat_t
		if err := unix.Fstatat(src.fd, n, &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		derr := unix.Fstatat(dst.fd, n, &d, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case derr != nil && !errors.Is(derr, unix.ENOENT):
			return derr
		case derr != nil:
			absent = append(absent, n)
		case s.Mode&unix.S_IFMT == unix.S_IFDIR && d.Mode&unix.S_IFMT == unix.S_IFDIR:
			err = p.mergeSub(src, dst, n, path+"/"+n, depth, note)
		case d.Mode&unix.S_IFMT == unix.S_IFDIR:
			note(path + "/" + n + " is left out: a folder here has its name, and a move deletes nothing")
			continue
		default:
			// A file or link here is replaced by what came, a folder
			// included: the old one goes with the staging folder.
			err = p.rename(src, n, dst, n, unix.RENAME_EXCHANGE)
		}
		if err != nil {
			return fmt.Errorf("putting %s/%s in place: %w", path, n, err)
		}
	}
	if err := p.renameAll(src, absent, dst); err != nil {
		return fmt.Errorf("putting %s in place: %w", path, err)
	}
	return nil
}

func (p *placing) mergeSub(src, dst folder, n, path string, depth int, note func(string)) error {
	s, err := ownerfile.Open(src.fd, n, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	d, err := ownerfile.Open(dst.fd, n, unix.O_PATH|unix.O_DIRECTORY, 0)
	if errors.Is(err, ownerfile.ErrLink) || errors.Is(err, unix.ENOTDIR) {
		// Swapped for a link or a file meanwhile: replaced, not entered.
		return p.rename(src, n, dst, n, unix.RENAME_EXCHANGE)
	}
	if err != nil {
		return err
	}
	defer unix.Close(d)
	return p.mergeDir(folder{s, src.rel + "/" + n}, folder{d, dst.rel + "/" + n}, path, depth+1, note)
}
