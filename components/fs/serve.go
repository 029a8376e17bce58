package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
)

// Decision rules. RuleAllowed is every allowed operation's rule: the
// workspace is the agent's. The others name the built-in check that
// refused.
const (
	RuleAllowed    = "workspace"
	RuleBeneath    = "fs.beneath"          // a symbolic link, a mount point, ".."
	RuleProtected  = "fs.protected"        // a protected path, which needs approval
	RuleRecursive  = "fs.delete-recursive" // needs confirmation and a backup
	RulePermission = "fs.permission"       // the file system refused
	RuleAuthority  = "fs.authority"        // the launcher's own files
	RuleNoRoom     = "fs.backup-no-room"   // no backup fits the store
)

// The operations, as named on the wire.
const (
	OpStat            = "stat"
	OpRead            = "read"
	OpWrite           = "write"
	OpList            = "list"
	OpMkdir           = "mkdir"
	OpRename          = "rename"
	OpDelete          = "delete"
	OpDeleteRecursive = "delete-recursive"
	// OpBackup is bash's alone: a verified backup of a tree a confirmed
	// shell command is about to delete.
	OpBackup = "backup"
)

// BackupResult is the id of the backup made.
type BackupResult struct {
	ID string `json:"id"`
}

// PathArgs are the arguments of stat, list, mkdir, delete and
// delete-recursive.
type PathArgs struct {
	Path string `json:"path"`
}

// ReadArgs ask for at most Length bytes (0: MaxData) of Path from Offset.
type ReadArgs struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length int    `json:"length"`
}

// ReadResult says whether the bytes, which travel as the answer's data,
// reach the end of the file. Data is filled in by Client.Read.
type ReadResult struct {
	EOF  bool   `json:"eof"`
	Data []byte `json:"-"`
}

// WriteArgs write the request's data to Path; CreateOnly refuses a name
// that exists.
type WriteArgs struct {
	Path       string `json:"path"`
	CreateOnly bool   `json:"create_only,omitempty"`
}

// WriteResult is the size written.
type WriteResult struct {
	Size int `json:"size"`
}

// ListResult is a directory's entries, sorted; Truncated when there were
// more than MaxList, or more than an answer holds (fitList).
type ListResult struct {
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated,omitempty"`
}

// listRoom is what a listing's JSON may take of an answer: the rest of
// rpc.MaxBody is for the decision beside it.
const listRoom = rpc.MaxBody - 16<<10

// fitList cuts r's entries (sorted) to the first that fit in listRoom,
// and says it is Truncated: MaxList long names (10,000 of 255 bytes) made
// 2.8 MB, and the whole listing was refused as an answer too large.
func fitList(r ListResult) ListResult {
	// Most listings are far below the room: a bound on their JSON (a
	// name's byte at most 6 escaped, the rest of an entry under 96)
	// spares encoding them twice, here and in the answer.
	bound := 32
	for _, e := range r.Entries {
		bound += 6*len(e.Name) + 96
	}
	if bound <= listRoom {
		return r
	}
	fits := func(n int) bool {
		b, err := json.Marshal(ListResult{Entries: r.Entries[:n], Truncated: true})
		return err == nil && len(b) <= listRoom
	}
	if fits(len(r.Entries)) {
		return r
	}
	// The most entries that fit: fits(lo) holds, fits(hi) does not.
	lo, hi := 0, len(r.Entries)
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return ListResult{Entries: r.Entries[:lo], Truncated: true}
}

// RenameArgs move From to To; Overwrite lets To exist.
type RenameArgs struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

// Register adds fs's operations to srv, over root.
func Register(srv *rpc.Server, root *Root) {
	for op, h := range handlers(root) {
		srv.HandleData(op, h)
	}
}

// handlers is the operation table. Every handler checks the caller's
// role again (the handshake already did), decodes its arguments strictly
// and refuses data it does not expect.
func handlers(root *Root) map[string]rpc.DataHandler {
	type op struct {
		data     bool // the request carries data (write)
		bashOnly bool // bash's, not the agent's (backup)
		h        func(root *Root, args json.RawMessage, data []byte) (any, []byte, error)
	}
	ops := map[string]op{
		OpStat: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a PathArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			info, err := root.Stat(a.Path)
			return info, nil, err
		}},
		OpRead: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a ReadArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			b, eof, err := root.Read(a.Path, a.Offset, a.Length)
			return ReadResult{EOF: eof}, b, err
		}},
		OpWrite: {data: true, h: func(root *Root, args json.RawMessage, data []byte) (any, []byte, error) {
			var a WriteArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			err := root.Write(a.Path, data, a.CreateOnly)
			return WriteResult{Size: len(data)}, nil, err
		}},
		OpList: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a PathArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			ents, trunc, err := root.List(a.Path)
			if err != nil {
				return nil, nil, err
			}
			return fitList(ListResult{Entries: ents, Truncated: trunc}), nil, nil
		}},
		OpMkdir: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a PathArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			return nil, nil, root.Mkdir(a.Path)
		}},
		OpRename: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a RenameArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			return nil, nil, root.Rename(a.From, a.To, a.Overwrite)
		}},
		OpDelete: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a PathArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			return nil, nil, root.Delete(a.Path)
		}},
		OpDeleteRecursive: {h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a PathArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			res, err := root.DeleteRecursive(a.Path)
			return res, nil, err
		}},
		OpBackup: {bashOnly: true, h: func(root *Root, args json.RawMessage, _ []byte) (any, []byte, error) {
			var a PathArgs
			if err := decode(args, &a); err != nil {
				return nil, nil, err
			}
			id, err := root.Backup(a.Path)
			return BackupResult{ID: id}, nil, err
		}},
	}
	out := map[string]rpc.DataHandler{}
	for name, o := range ops {
		out[name] = func(ctx context.Context, caller pki.Role, args json.RawMessage, data []byte) (rpc.Decision, any, []byte) {
			if caller != pki.Agent && caller != pki.Bash {
				return rpc.Deny(rpc.ReasonCallerRole, "", "only the agent and bash use fs, not "+string(caller)), nil, nil
			}
			if o.bashOnly && caller != pki.Bash {
				return rpc.Deny(rpc.ReasonCallerRole, "", name+" is bash's alone, not "+string(caller)+"'s"), nil, nil
			}
			if !o.data && len(data) > 0 {
				return rpc.Deny(rpc.ReasonBadRequest, "", name+" takes no data"), nil, nil
			}
			result, out, err := o.h(root.forCall(ctx), args, data)
			if d := Decide(err); !d.Allowed {
				return d, nil, nil
			}
			return rpc.Allow(RuleAllowed), result, out
		}
	}
	return out
}

// errArgs is arguments that do not decode.
type errArgs struct{ err error }

func (e errArgs) Error() string { return "arguments: " + e.err.Error() }

// decode reads args into v: one JSON object, no unknown field, nothing
// after it.
func decode(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errArgs{err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return errArgs{errors.New("more than one JSON value")}
	}
	return nil
}

// Decide turns an operation's error into the decision sent back: allowed
// under RuleAllowed, or a denial whose detail names the operation, the
// path and the cause, never file contents.
func Decide(err error) rpc.Decision {
	if err == nil {
		return rpc.Allow(RuleAllowed)
	}
	var ea errArgs
	if errors.As(err, &ea) {
		return rpc.Deny(rpc.ReasonBadRequest, "", ea.Error())
	}
	var e *Error
	if !errors.As(err, &e) {
		return rpc.Deny(rpc.ReasonBadRequest, "", "the file system failed")
	}
	detail := fmt.Sprintf("%s %q: %s", e.Op, e.Path, e.Detail)
	switch e.Kind {
	case KindNotFound:
		return rpc.Deny(rpc.ReasonUnknown, "", detail)
	case KindEscape:
		return rpc.Deny(rpc.ReasonNoRule, RuleBeneath, detail)
	case KindProtected:
		return rpc.Deny(rpc.ReasonNoRule, RuleProtected, detail)
	case KindNeedsConfirmation:
		return rpc.Deny(rpc.ReasonNoRule, RuleRecursive, detail)
	case KindPermission:
		return rpc.Deny(rpc.ReasonNoRule, RulePermission, detail)
	case KindAuthority:
		return rpc.Deny(rpc.ReasonNoRule, RuleAuthority, detail)
	case KindNoRoom:
		return rpc.Deny(rpc.ReasonNoRule, RuleNoRoom, detail)
	default: // KindBadRequest, KindFailed
		return rpc.Deny(rpc.ReasonBadRequest, "", detail)
	}
}

// Client is fs as the agent and bash call it.
type Client struct{ c *rpc.Client }

// NewClient wraps c, an rpc client for the fs component.
func NewClient(c *rpc.Client) *Client { return &Client{c: c} }

// Stat describes path, without following a final symbolic link.
func (c *Client) Stat(ctx context.Context, path string) (Info, rpc.Decision, error) {
	var info Info
	d, err := c.c.Call(ctx, OpStat, PathArgs{Path: path}, &info)
	return info, d, err
}

// Read reads at most length bytes (0: MaxData) of path from offset.
func (c *Client) Read(ctx context.Context, path string, offset int64, length int) (ReadResult, rpc.Decision, error) {
	var r ReadResult
	d, data, err := c.c.CallData(ctx, OpRead, ReadArgs{Path: path, Offset: offset, Length: length}, nil, &r)
	if d.Allowed && err == nil {
		r.Data = data
	}
	return r, d, err
}

// Write replaces path with data, atomically (createOnly: only if it does
// not exist).
func (c *Client) Write(ctx context.Context, path string, data []byte, createOnly bool) (WriteResult, rpc.Decision, error) {
	var r WriteResult
	d, _, err := c.c.CallData(ctx, OpWrite, WriteArgs{Path: path, CreateOnly: createOnly}, data, &r)
	return r, d, err
}

// List lists directory path.
func (c *Client) List(ctx context.Context, path string) (ListResult, rpc.Decision, error) {
	var r ListResult
	d, err := c.c.Call(ctx, OpList, PathArgs{Path: path}, &r)
	return r, d, err
}

// Mkdir makes directory path.
func (c *Client) Mkdir(ctx context.Context, path string) (rpc.Decision, error) {
	return c.c.Call(ctx, OpMkdir, PathArgs{Path: path}, nil)
}

// Rename moves from to to (overwrite: replacing what is there).
func (c *Client) Rename(ctx context.Context, from, to string, overwrite bool) (rpc.Decision, error) {
	return c.c.Call(ctx, OpRename, RenameArgs{From: from, To: to, Overwrite: overwrite}, nil)
}

// Delete removes a file or an empty directory.
func (c *Client) Delete(ctx context.Context, path string) (rpc.Decision, error) {
	return c.c.Call(ctx, OpDelete, PathArgs{Path: path}, nil)
}

// DeleteRecursive asks for a tree's removal, which the person confirms
// and a backup precedes.
func (c *Client) DeleteRecursive(ctx context.Context, path string) (DeletedTree, rpc.Decision, error) {
	var r DeletedTree
	d, err := c.c.Call(ctx, OpDeleteRecursive, PathArgs{Path: path}, &r)
	return r, d, err
}

// Backup has fs stage and verify a backup of path (bash's, once the
// person confirmed a recursive deletion by shell command).
func (c *Client) Backup(ctx context.Context, path string) (BackupResult, rpc.Decision, error) {
	var r BackupResult
	d, err := c.c.Call(ctx, OpBackup, PathArgs{Path: path}, &r)
	return r, d, err
}
