package redisstore

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A record is a Redis hash the store keeps one of per entity (a post, a
// profile, a comment), or one packed value of a hash per entity (a
// notification: newPackedRecord), described once by its table
// (records.go): each field's name, its codec, and whether it may change
// once the record is written. Everything else that names the fields derives from
// the table: the HMGET lists and the positions in their replies, the
// decoder, the HSET pairs a writer sends, what a cache may keep, and the
// names the Lua scripts use (luaPrelude). Adding a field to a record is
// one row.

// change says whether a field may be written after its record is created.
type change int

const (
	// fixed fields are written with the record and never after: a cache
	// may keep them for as long as the record lives.
	fixed change = iota + 1
	// mutable fields are written after creation too (by a script, by an
	// edit): every read takes them from Redis.
	mutable
	// versioned fields change only in the step that writes their
	// record's version field anew (a post's content and mentions, with
	// its edited time: editPostScript): a cache keeps them with the
	// version they belong to, and a read that finds another version
	// reads them again.
	versioned
)

// codec moves one field between the hash and the Go value T that holds a
// record as the store reads it. get is the value a writer sets (false: the
// field is not written); set decodes a value read (ok false: the field is
// missing, v is "").
type codec[T any] struct {
	get func(r *T) (v string, ok bool)
	set func(r *T, v string, ok bool)
}

// field is one row of a record's table.
type field[T any] struct {
	name   string
	change change
	codec[T]
}

// record is a record's table and what derives from it.
type record[T any] struct {
	// lua names the record in the scripts: a table lua.<name> of its
	// field names (luaPrelude).
	lua string
	// sep joins a packed record's fields into one value (newPackedRecord);
	// "" for a hash.
	sep    string
	fields []field[T]
	index  map[string]int
	all    []any // every field, in order: HMGET's arguments
}

// newRecord builds a record from its table; a table that fails check
// panics at start-up.
func newRecord[T any](lua string, fields ...field[T]) *record[T] {
	r := &record[T]{lua: lua, fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		r.index[f.name] = i
		r.all = append(r.all, f.name)
	}
	if err := r.check(); err != nil {
		panic("redisstore: " + err.Error())
	}
	return r
}

// newPackedRecord builds a record kept as one value, its fields joined
// by sep in the table's order (pack), in a hash that holds one such value
// per entity (a user's NoteData) rather than one hash per entity. The
// scripts' table of it (luaPrelude) gives each field's position in the
// value.
func newPackedRecord[T any](lua, sep string, fields ...field[T]) *record[T] {
	r := newRecord(lua, fields...)
	r.sep = sep
	return r
}

// pack is src's packed value: each field in the table's order up to the
// last one its codec writes, one it does not write before that empty.
func (r *record[T]) pack(src *T) string {
	vals := make([]string, len(r.fields))
	n := 0
	for i, f := range r.fields {
		if v, ok := f.get(src); ok {
			vals[i], n = v, i+1
		}
	}
	return strings.Join(vals[:n], r.sep)
}

// unpack sets dst from v, a packed value, and returns how many fields v
// holds; the fields past them decode as missing.
func (r *record[T]) unpack(dst *T, v string) int {
	vals := strings.Split(v, r.sep)
	for i, f := range r.fields {
		if i < len(vals) {
			f.set(dst, vals[i], true)
		} else {
			f.set(dst, "", false)
		}
	}
	return len(vals)
}

// fieldName is what a hash field's name may hold: what Lua can use as a
// table key too.
var fieldName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// check reports a table that cannot work: a field without a name, a
// codec or a mutability, or named twice.
func (r *record[T]) check() error {
	if len(r.fields) == 0 {
		return fmt.Errorf("record %s has no fields", r.lua)
	}
	seen := map[string]bool{}
	for _, f := range r.fields {
		switch {
		case !fieldName.MatchString(f.name):
			return fmt.Errorf("record %s: field %q: a name is lower-case letters and digits", r.lua, f.name)
		case seen[f.name]:
			return fmt.Errorf("record %s: field %s twice", r.lua, f.name)
		case f.get == nil || f.set == nil:
			return fmt.Errorf("record %s: field %s has no codec", r.lua, f.name)
		case f.change != fixed && f.change != mutable && f.change != versioned:
			return fmt.Errorf("record %s: field %s says neither fixed, mutable nor versioned", r.lua, f.name)
		}
		seen[f.name] = true
	}
	return nil
}

// at is the position of a field in the record's table (and in an HMGET
// of all): a name that is not in the table panics.
func (r *record[T]) at(name string) int {
	i, ok := r.index[name]
	if !ok {
		panic(fmt.Sprintf("redisstore: record %s has no field %s", r.lua, name))
	}
	return i
}

// args are the named fields, checked against the table, boxed for hmget.
func (r *record[T]) args(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = r.fields[r.at(n)].name
	}
	return out
}

// strs are the named fields, checked against the table.
func (r *record[T]) strs(names ...string) []string {
	for _, n := range names {
		r.at(n)
	}
	return names
}

// names are the fields keep takes (all for nil), in the table's order.
func (r *record[T]) names(keep func(field[T]) bool) []string {
	var out []string
	for _, f := range r.fields {
		if keep == nil || keep(f) {
			out = append(out, f.name)
		}
	}
	return out
}

// name is a field's name, checked against the table.
func (r *record[T]) name(n string) string { return r.fields[r.at(n)].name }

// decode sets dst from vals, an HMGET of all.
func (r *record[T]) decode(dst *T, vals []any) {
	for i, f := range r.fields {
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		s, ok := v.(string)
		f.set(dst, s, ok)
	}
}

// view is the read of some of a record's fields with one HMGET.
type view[T any] struct {
	rec  *record[T]
	args []any
}

// view reads the named fields, in this order (a post's lat before its lng
// and place).
func (r *record[T]) view(names ...string) view[T] {
	return view[T]{rec: r, args: r.args(names...)}
}

// queue queues the view's HMGET of key.
func (v view[T]) queue(ctx context.Context, p redis.Pipeliner, key string) *redis.SliceCmd {
	return hmget(ctx, p, key, v.args)
}

// decode sets dst from vals, a reply of the view's HMGET.
func (v view[T]) decode(dst *T, vals []any) {
	for j, name := range v.args {
		var val any
		if j < len(vals) {
			val = vals[j]
		}
		s, ok := val.(string)
		v.rec.fields[v.rec.index[name.(string)]].set(dst, s, ok)
	}
}

// encode is the field/value pairs a writer sets for src: every field its
// codec writes, in the table's order.
func (r *record[T]) encode(src *T) []any {
	return r.encodeOnly(src, nil)
}

// encodeOnly is encode of the named fields only (all for nil).
func (r *record[T]) encodeOnly(src *T, names []string) []any {
	var out []any
	for _, f := range r.fields {
		if names != nil && !slices.Contains(names, f.name) {
			continue
		}
		if v, ok := f.get(src); ok {
			out = append(out, f.name, v)
		}
	}
	return out
}

// update is the field/value pairs that change the named fields of a
// record to src's: a field src leaves unset is written empty, which reads
// as unset. A fixed field is an error: nothing writes one after its
// record is created.
func (r *record[T]) update(src *T, names []string) ([]any, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("record %s: an update of no field", r.lua)
	}
	out := make([]any, 0, 2*len(names))
	for _, n := range names {
		i, ok := r.index[n]
		if !ok {
			return nil, fmt.Errorf("record %s has no field %s", r.lua, n)
		}
		f := r.fields[i]
		if f.change != mutable {
			return nil, fmt.Errorf("record %s: field %s is fixed or versioned", r.lua, n)
		}
		v, set := f.get(src)
		if !set {
			v = ""
		}
		out = append(out, f.name, v)
	}
	return out, nil
}

// recordInfo is what the scripts and the tests know of a record.
type recordInfo struct {
	lua          string
	names, fixed []string
	packed       bool
}

// info is the record's recordInfo.
func (r *record[T]) info() recordInfo {
	return recordInfo{lua: r.lua, names: r.names(nil), fixed: r.names(func(f field[T]) bool { return f.change == fixed }), packed: r.sep != ""}
}

// luaPrelude is the Lua that every script starts with: per record, a
// table from each field's name to itself (F.post.nlikes is "nlikes"), or,
// for a packed record, to its position in the value (F.note.group is 5),
// so that a script names a field through the table and a misspelt one is
// nil, which Redis refuses as an argument (or lib/notes.lua's note_pack as
// a position). TestLuaFieldNames holds the scripts to it.
func luaPrelude() string {
	var b strings.Builder
	b.WriteString("local F = {")
	for i, r := range allRecords() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.lua + " = {")
		for j, n := range r.names {
			if j > 0 {
				b.WriteString(", ")
			}
			if r.packed {
				fmt.Fprintf(&b, "%s = %d", n, j+1)
			} else {
				fmt.Fprintf(&b, "%s = '%s'", n, n)
			}
		}
		b.WriteString("}")
	}
	b.WriteString("}\n")
	return b.String()
}
