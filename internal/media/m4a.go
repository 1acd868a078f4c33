package media

import (
	"bytes"
	"encoding/binary"
	"io"
)

// m4aDuration reads the movie header (moov/mvhd) of an MP4 container
// that holds a sound track and no video track.
func m4aDuration(r io.ReaderAt, size int64) (float64, bool) {
	moov, ok := findBox(r, 0, size, "moov")
	if !ok {
		return 0, false
	}
	mvhd, ok := findBox(r, moov.data, moov.end, "mvhd")
	if !ok {
		return 0, false
	}
	sound, video := false, false
	for t := range boxes(r, moov.data, moov.end) {
		if t.typ != "trak" {
			continue
		}
		mdia, ok := findBox(r, t.data, t.end, "mdia")
		if !ok {
			continue
		}
		hdlr, ok := findBox(r, mdia.data, mdia.end, "hdlr")
		var h [12]byte
		if !ok || hdlr.end-hdlr.data < 12 {
			continue
		}
		if _, err := r.ReadAt(h[:], hdlr.data); err != nil {
			return 0, false
		}
		switch string(h[8:12]) {
		case "soun":
			sound = true
		case "vide":
			video = true
		}
	}
	if !sound || video {
		return 0, false
	}
	var b [32]byte
	n, _ := r.ReadAt(b[:], mvhd.data)
	var scale, dur uint64
	switch {
	case n >= 20 && b[0] == 0:
		scale, dur = uint64(binary.BigEndian.Uint32(b[12:])), uint64(binary.BigEndian.Uint32(b[16:]))
	case n >= 32 && b[0] == 1:
		scale, dur = uint64(binary.BigEndian.Uint32(b[20:])), binary.BigEndian.Uint64(b[24:])
	default:
		return 0, false
	}
	if scale == 0 {
		return 0, false
	}
	return float64(dur) / float64(scale), true
}

// box is an ISO BMFF box: its type and where its payload lies.
type box struct {
	typ            string
	off, data, end int64 // header, payload, end
}

// boxes yields the boxes laid end to end in r[off:end].
func boxes(r io.ReaderAt, off, end int64) func(func(box) bool) {
	return func(yield func(box) bool) {
		var h [16]byte
		for off+8 <= end {
			if _, err := r.ReadAt(h[:8], off); err != nil {
				return
			}
			n, hdr := int64(binary.BigEndian.Uint32(h[:4])), int64(8)
			switch n {
			case 0:
				n = end - off
			case 1:
				if _, err := r.ReadAt(h[8:16], off+8); err != nil {
					return
				}
				n, hdr = int64(binary.BigEndian.Uint64(h[8:16])), 16
			}
			if n < hdr || off+n > end {
				return
			}
			if !yield(box{typ: string(h[4:8]), off: off, data: off + hdr, end: off + n}) {
				return
			}
			off += n
		}
	}
}

// findBox returns the first box of type typ in r[off:end].
func findBox(r io.ReaderAt, off, end int64, typ string) (box, bool) {
	for b := range boxes(r, off, end) {
		if b.typ == typ {
			return b, true
		}
	}
	return box{}, false
}

// M4A boxes the stored copy leaves out wherever they sit in the movie:
// user data (udta: titles, names, the ©xyz location, chapters), metadata
// (meta: iTunes tags, cover art), vendor boxes (uuid, where XMP lives) and
// padding.
var m4aDropped = map[string]bool{"udta": true, "meta": true, "uuid": true, "free": true, "skip": true, "wide": true}

// m4aContainers are the boxes inside moov whose children are filtered.
var m4aContainers = map[string]bool{"trak": true, "mdia": true, "minf": true, "stbl": true, "edts": true, "dinf": true}

// cleanM4A writes an M4A's ftyp, its movie (moov) without the dropped
// boxes and with the creation and modification times zeroed, and its
// media data (mdat) as sent, with the chunk offsets (stco, co64) moved
// to where the media data now lies. A file with a box of another kind at
// its top level (a fragmented movie's moof, for one), or an offset
// outside the media data, is refused: it cannot be moved safely.
func cleanM4A(w io.Writer, r io.ReaderAt, size int64) error {
	var kept []box
	var moov []byte
	end := int64(0)
	for b := range boxes(r, 0, size) {
		end = b.end
		switch {
		case b.typ == "moov":
			if moov != nil {
				return badM4A()
			}
			moov = make([]byte, b.end-b.off)
			if _, err := r.ReadAt(moov, b.off); err != nil {
				return badM4A()
			}
			if moov = filterBoxes(moov[b.data-b.off:]); moov == nil {
				return badM4A()
			}
			moov = appendBox(nil, "moov", moov)
		case b.typ == "ftyp", b.typ == "mdat":
		case m4aDropped[b.typ]:
			continue
		default:
			return refuse("is an M4A file with a " + b.typ + " box, which this server does not store")
		}
		kept = append(kept, b)
	}
	if end != size || moov == nil {
		return badM4A()
	}
	if err := moveChunkOffsets(moov, kept, int64(len(moov))); err != nil {
		return err
	}
	for _, b := range kept {
		var err error
		if b.typ == "moov" {
			_, err = w.Write(moov)
		} else {
			err = copyRange(w, r, b.off, b.end-b.off)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func badM4A() error { return refuse("is a damaged M4A file") }

// appendBox appends a box of type typ holding payload.
func appendBox(b []byte, typ string, payload []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(8+len(payload)))
	return append(append(b, typ...), payload...)
}

// filterBoxes returns the boxes of a container's payload without the
// dropped ones, the containers among them filtered in turn, or nil when
// the payload is not a list of boxes.
func filterBoxes(payload []byte) []byte {
	r := bytes.NewReader(payload)
	out := []byte{}
	end := int64(0)
	for b := range boxes(r, 0, int64(len(payload))) {
		end = b.end
		body := payload[b.data:b.end]
		switch {
		case m4aDropped[b.typ]:
			continue
		case m4aContainers[b.typ]:
			if body = filterBoxes(body); body == nil {
				return nil
			}
		case b.typ == "mvhd", b.typ == "tkhd", b.typ == "mdhd":
			body = zeroTimes(body)
		}
		out = appendBox(out, b.typ, body)
	}
	if end != int64(len(payload)) {
		return nil
	}
	return out
}

// zeroTimes returns a movie, track or media header with its creation and
// modification times (when it was recorded) set to zero.
func zeroTimes(h []byte) []byte {
	h = append([]byte(nil), h...)
	n := 8 // version 0: two 32-bit times after version and flags
	if len(h) > 0 && h[0] == 1 {
		n = 16
	}
	if len(h) >= 4+n {
		clear(h[4 : 4+n])
	}
	return h
}

// moveChunkOffsets rewrites, in the filtered moov, the chunk offsets into
// each kept mdat to where that mdat lies once the boxes before it are
// filtered or left out.
func moveChunkOffsets(moov []byte, kept []box, moovLen int64) error {
	type span struct{ from, to, by int64 }
	var spans []span
	at := int64(0)
	for _, b := range kept {
		n := b.end - b.off
		switch b.typ {
		case "moov":
			n = moovLen
		case "mdat":
			spans = append(spans, span{b.data, b.end, at - b.off})
		}
		at += n
	}
	move := func(o int64) (int64, bool) {
		for _, s := range spans {
			if o >= s.from && o < s.to {
				return o + s.by, true
			}
		}
		return 0, false
	}
	return patchOffsets(moov[8:], move)
}

// patchOffsets moves the entries of each stco and co64 box found in the
// boxes of payload, in place.
func patchOffsets(payload []byte, move func(int64) (int64, bool)) error {
	for b := range boxes(bytes.NewReader(payload), 0, int64(len(payload))) {
		body := payload[b.data:b.end]
		width := 4
		switch {
		case m4aContainers[b.typ]:
			if err := patchOffsets(body, move); err != nil {
				return err
			}
			continue
		case b.typ == "co64":
			width = 8
		case b.typ != "stco":
			continue
		}
		if len(body) < 8 || int64(binary.BigEndian.Uint32(body[4:]))*int64(width) > int64(len(body)-8) {
			return badM4A()
		}
		count := int(binary.BigEndian.Uint32(body[4:]))
		for i := 8; i < 8+count*width; i += width {
			var o int64
			if width == 4 {
				o = int64(binary.BigEndian.Uint32(body[i:]))
			} else {
				o = int64(binary.BigEndian.Uint64(body[i:]))
			}
			n, ok := move(o)
			if !ok {
				return refuse("is an M4A file whose chunk offsets point outside its media data")
			}
			if width == 4 {
				binary.BigEndian.PutUint32(body[i:], uint32(n))
			} else {
				binary.BigEndian.PutUint64(body[i:], uint64(n))
			}
		}
	}
	return nil
}
