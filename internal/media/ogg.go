package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// oggPage is one page of an Ogg stream, its header fields parsed.
type oggPage struct {
	flags   byte
	granule uint64
	serial  uint32
	seq     uint32
	lacing  []byte
	data    []byte
}

// Ogg page header flags.
const (
	oggContinued = 0x01
	oggBOS       = 0x02
	oggEOS       = 0x04
)

// cleanOgg writes an Ogg Opus stream with its comment packet (OpusTags:
// Vorbis comments, which may hold names, places, pictures) replaced by
// one that keeps the encoder's vendor string and no comment. The pages
// that held the old packet become one page; the sequence numbers after
// it are renumbered and every page's CRC is computed again. A page whose
// CRC is wrong, bytes that are not a page, a page after the end of the
// stream, or a second logical stream (chained or multiplexed) are
// refused.
func cleanOgg(w io.Writer, r io.ReaderAt, size int64) error {
	br := bufio.NewReader(io.NewSectionReader(r, 0, size))
	bw := bufio.NewWriter(w)
	var serial, removed uint32
	var tags []byte
	inTags, ended := false, false
	for n := 0; ; n++ {
		p, err := readOggPage(br)
		if errors.Is(err, io.EOF) && n > 0 {
			break
		}
		if err != nil {
			return err
		}
		switch {
		case n == 0:
			if p.flags&oggBOS == 0 || !p.completes(1) {
				return badOgg()
			}
			serial, inTags = p.serial, true
		case p.serial != serial || p.flags&oggBOS != 0 || ended:
			return refuse("is an Ogg file of more than one stream")
		case inTags:
			tags = append(tags, p.data...)
			if p.lacing[len(p.lacing)-1] == 255 {
				if bytes.Count(p.lacing, []byte{255}) != len(p.lacing) {
					return badOgg()
				}
				removed++
				continue
			}
			if !p.completes(1) {
				return badOgg()
			}
			inTags = false
			if p, err = emptyOpusTags(p, tags); err != nil {
				return err
			}
		default:
			p.seq -= removed
		}
		ended = p.flags&oggEOS != 0
		if _, err := bw.Write(p.encode()); err != nil {
			return err
		}
	}
	if inTags {
		return badOgg()
	}
	return bw.Flush()
}

func badOgg() error { return refuse("is a damaged Ogg Opus file") }

// completes reports whether the page ends exactly k packets and nothing
// of another packet starts on it.
func (p oggPage) completes(k int) bool {
	ends := 0
	for _, l := range p.lacing {
		if l < 255 {
			ends++
		}
	}
	return ends == k && p.lacing[len(p.lacing)-1] < 255
}

// readOggPage reads a page and checks its CRC.
func readOggPage(br *bufio.Reader) (oggPage, error) {
	var h [27]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return oggPage{}, io.EOF
		}
		return oggPage{}, badOgg()
	}
	if string(h[:4]) != "OggS" || h[4] != 0 || h[26] == 0 {
		return oggPage{}, badOgg()
	}
	p := oggPage{flags: h[5], granule: binary.LittleEndian.Uint64(h[6:]),
		serial: binary.LittleEndian.Uint32(h[14:]), seq: binary.LittleEndian.Uint32(h[18:]),
		lacing: make([]byte, h[26])}
	if _, err := io.ReadFull(br, p.lacing); err != nil {
		return oggPage{}, badOgg()
	}
	n := 0
	for _, l := range p.lacing {
		n += int(l)
	}
	p.data = make([]byte, n)
	if _, err := io.ReadFull(br, p.data); err != nil {
		return oggPage{}, badOgg()
	}
	if binary.LittleEndian.Uint32(h[22:]) != binary.LittleEndian.Uint32(p.encode()[22:]) {
		return oggPage{}, badOgg()
	}
	return p, nil
}

// encode writes the page with its CRC.
func (p oggPage) encode() []byte {
	b := append([]byte("OggS\x00"), p.flags)
	b = binary.LittleEndian.AppendUint64(b, p.granule)
	b = binary.LittleEndian.AppendUint32(b, p.serial)
	b = binary.LittleEndian.AppendUint32(b, p.seq)
	b = append(b, 0, 0, 0, 0, byte(len(p.lacing)))
	b = append(append(b, p.lacing...), p.data...)
	binary.LittleEndian.PutUint32(b[22:], oggCRC(b))
	return b
}

// emptyOpusTags is the page that replaces the comment header's pages
// (last the one given): an OpusTags packet with the vendor string of
// tags and no comment.
func emptyOpusTags(last oggPage, tags []byte) (oggPage, error) {
	if len(tags) < 12 || string(tags[:8]) != "OpusTags" {
		return oggPage{}, badOgg()
	}
	n := int64(binary.LittleEndian.Uint32(tags[8:]))
	if 12+n > int64(len(tags)) || 12+n+4 > 254*255 {
		return oggPage{}, refuse("is an Ogg Opus file whose vendor string is too long")
	}
	packet := append(tags[:12+n:12+n], 0, 0, 0, 0) // no comment
	p := oggPage{flags: last.flags &^ oggContinued, granule: last.granule, serial: last.serial, seq: 1, data: packet}
	for l := len(packet); ; l -= 255 {
		if l < 255 {
			p.lacing = append(p.lacing, byte(l))
			break
		}
		p.lacing = append(p.lacing, 255)
	}
	return p, nil
}

// oggCRCTable is the Ogg CRC-32: polynomial 0x04c11db7, not reflected,
// initial value 0, no final xor.
var oggCRCTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func oggCRC(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 ^ oggCRCTable[byte(c>>24)^x]
	}
	return c
}
