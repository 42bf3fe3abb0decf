package fs

import (
	"context"
	"fmt"
	"io/fs"

	"lnk.dev/lnk/helpers/fsbroker"
	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// WriteOptions are resolve's: the new file's mode and the version the
// write names.
type WriteOptions = resolve.WriteOptions

// Write writes data to name atomically (the broker's temp file, fsync,
// rename). It returns the new version.
func (c *Client) Write(ctx context.Context, root, name string, data []byte, opt WriteOptions) (resolve.Version, error) {
	return c.write(ctx, fsbroker.SpecWrite, "write", root, name, data, uint32(opt.Mode.Perm()), opt.Expect)
}

// Replace writes data to name only if the file is still at version
// expect (a compare-and-swap; resolve.Absent for a new file).
func (c *Client) Replace(ctx context.Context, root, name string, data []byte, expect resolve.Version) (resolve.Version, error) {
	return c.write(ctx, fsbroker.SpecReplace, "replace", root, name, data, 0, expect)
}

func (c *Client) write(ctx context.Context, spec wire.Spec, op, root, name string, data []byte, mode uint32, expect resolve.Version) (resolve.Version, error) {
	req := &fsbroker.WriteReq{Root: root, Path: name, Mode: mode, Expect: expect.String()}
	var rep fsbroker.WriteReply
	var err error
	if len(data) <= fsbroker.MaxInline {
		req.Data = data
		_, err = c.call(ctx, spec, op, name, req, &rep)
	} else {
		mf, merr := fsbroker.Memfd("lnk-write", data)
		if merr != nil {
			return resolve.Version{}, fmt.Errorf("fsbroker %s %q: %w", op, name, merr)
		}
		_, err = c.call(ctx, spec, op, name, req, &rep, mf)
		mf.Close()
	}
	if err != nil {
		return resolve.Version{}, err
	}
	return resolve.ParseVersion(rep.Version)
}

// Mkdir makes the folder name (mode 0o700 when zero).
func (c *Client) Mkdir(ctx context.Context, root, name string, mode fs.FileMode) error {
	_, err := c.call(ctx, fsbroker.SpecMkdir, "mkdir", name, &fsbroker.MkdirReq{Root: root, Path: name, Mode: uint32(mode.Perm())}, &fsbroker.Empty{})
	return err
}

// MkdirAll makes name and every missing folder above it, never through
// a link.
func (c *Client) MkdirAll(ctx context.Context, root, name string, mode fs.FileMode) error {
	_, err := c.call(ctx, fsbroker.SpecMkdir, "mkdir", name, &fsbroker.MkdirReq{Root: root, Path: name, Mode: uint32(mode.Perm()), All: true}, &fsbroker.Empty{})
	return err
}

// Rename renames from to to within root; noReplace refuses an existing to.
func (c *Client) Rename(ctx context.Context, root, from, to string, noReplace bool) error {
	_, err := c.call(ctx, fsbroker.SpecRename, "rename", from, &fsbroker.RenameReq{Root: root, From: from, To: to, NoReplace: noReplace}, &fsbroker.Empty{})
	return err
}

// Remove removes the file or empty folder name.
func (c *Client) Remove(ctx context.Context, root, name string) error {
	_, err := c.call(ctx, fsbroker.SpecRemove, "remove", name, &fsbroker.PathReq{Root: root, Path: name}, &fsbroker.Empty{})
	return err
}

// Stat describes name without following a link.
func (c *Client) Stat(ctx context.Context, root, name string) (fsbroker.StatReply, error) {
	var rep fsbroker.StatReply
	_, err := c.call(ctx, fsbroker.SpecStat, "stat", name, &fsbroker.PathReq{Root: root, Path: name}, &rep)
	return rep, err
}

// List lists the folder name.
func (c *Client) List(ctx context.Context, root, name string, opt resolve.ListOptions) ([]fsbroker.Entry, error) {
	return c.entries(ctx, fsbroker.SpecList, "list", name, &fsbroker.ListReq{Root: root, Path: name, SkipHidden: opt.SkipHidden, Max: opt.Max})
}

// Walk lists the tree beneath name, depth first, never through a link.
func (c *Client) Walk(ctx context.Context, root, name string, opt resolve.WalkOptions) ([]fsbroker.Entry, error) {
	return c.entries(ctx, fsbroker.SpecWalk, "walk", name, &fsbroker.ListReq{Root: root, Path: name, SkipHidden: opt.SkipHidden, MaxDepth: opt.MaxDepth, Max: opt.Max})
}

// maxListing caps a listing's memfd.
const maxListing = 256 << 20

func (c *Client) entries(ctx context.Context, spec wire.Spec, op, name string, req *fsbroker.ListReq) ([]fsbroker.Entry, error) {
	var rep fsbroker.ListReply
	files, err := c.call(ctx, spec, op, name, req, &rep)
	if err != nil {
		return nil, err
	}
	defer wire.CloseFiles(files)
	b, err := resolve.ReadCapped(int(files[0].Fd()), 64<<10, maxListing, name)
	if err != nil {
		return nil, fmt.Errorf("fsbroker %s %q: reading the listing: %w", op, name, err)
	}
	var ents []fsbroker.Entry
	if err := wire.Unmarshal(b, &ents); err != nil {
		return nil, fmt.Errorf("fsbroker %s %q: malformed listing: %v", op, name, err)
	}
	if len(ents) != rep.Count {
		return nil, fmt.Errorf("fsbroker %s %q: the listing has %d entries, the reply says %d", op, name, len(ents), rep.Count)
	}
	return ents, nil
}
