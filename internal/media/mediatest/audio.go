package mediatest

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// oggPacketPages lays a packet out on pages of the stream OggOpus uses,
// from sequence number seq, with at most 255 segments a page, and
// returns them and the next sequence number.
func oggPacketPages(flags byte, granule uint64, seq uint32, packet []byte) ([]byte, uint32) {
	var lacing []byte
	for l := len(packet); ; l -= 255 {
		if l < 255 {
			lacing = append(lacing, byte(l))
			break
		}
		lacing = append(lacing, 255)
	}
	var out []byte
	for first := true; len(lacing) > 0; first = false {
		n := min(len(lacing), 255)
		size := 0
		for _, l := range lacing[:n] {
			size += int(l)
		}
		p := []byte("OggS\x00")
		f := flags
		if !first {
			f |= 0x01 // continued packet
		}
		p = append(p, f)
		p = binary.LittleEndian.AppendUint64(p, granule)
		p = binary.LittleEndian.AppendUint32(p, 1234)
		p = binary.LittleEndian.AppendUint32(p, seq)
		p = append(p, 0, 0, 0, 0, byte(n))
		p = append(append(p, lacing[:n]...), packet[:size]...)
		binary.LittleEndian.PutUint32(p[22:], OggCRC(p))
		out = append(out, p...)
		packet, lacing, seq = packet[size:], lacing[n:], seq+1
	}
	return out, seq
}

// OggOpusVendor is the encoder's vendor string in OggOpusTagged.
const OggOpusVendor = "libopus 1.5.2"

// OggOpusTagged is OggOpus(preSkip, granule) whose OpusTags packet holds
// Vorbis comments (a title, a place, and a picture of pictureBytes, which
// makes the packet span pages when large), followed by three audio pages.
func OggOpusTagged(preSkip uint16, granule uint64, pictureBytes int) []byte {
	head := append([]byte("OpusHead\x01\x02"), binary.LittleEndian.AppendUint16(nil, preSkip)...)
	head = append(head, binary.LittleEndian.AppendUint32(nil, 48000)...)
	head = append(head, 0, 0, 0)
	out, seq := oggPacketPages(2, 0, 0, head)
	comments := []string{"TITLE=Morning walk", "LOCATION=" + Secret,
		"METADATA_BLOCK_PICTURE=" + Secret + string(bytes.Repeat([]byte("p"), pictureBytes))}
	tags := []byte("OpusTags")
	tags = binary.LittleEndian.AppendUint32(tags, uint32(len(OggOpusVendor)))
	tags = append(tags, OggOpusVendor...)
	tags = binary.LittleEndian.AppendUint32(tags, uint32(len(comments)))
	for _, c := range comments {
		tags = binary.LittleEndian.AppendUint32(tags, uint32(len(c)))
		tags = append(tags, c...)
	}
	pages, seq := oggPacketPages(0, 0, seq, tags)
	out = append(out, pages...)
	for i, g := range []uint64{granule / 3, 2 * granule / 3, granule} {
		flags := byte(0)
		if i == 2 {
			flags = 4 // end of stream
		}
		pages, seq = oggPacketPages(flags, g, seq, bytes.Repeat([]byte{byte(i + 1)}, 40))
		out = append(out, pages...)
	}
	return out
}

// M4ASample is the content of the i-th chunk of M4AWithMetadata's media
// data, for tests to find where the chunk offsets point.
func M4ASample(i int) string { return fmt.Sprintf("SAMPLE-%02d", i) }

// M4AWithMetadata is an M4A of duration/timescale seconds whose movie
// holds user data (udta with a title and a ©xyz location, meta with
// iTunes tags), a uuid box of XMP and dated headers, at the movie's level
// and the track's, with free and top-level meta boxes beside it; its
// media data holds three chunks that a chunk offset table (co64 when
// wide, else stco) points to. The media data comes after the movie, or
// before it when mdatFirst.
func M4AWithMetadata(timescale, duration uint32, mdatFirst, wide bool) []byte {
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[4:], 0xe3a1b2c3) // creation time
	binary.BigEndian.PutUint32(mvhd[12:], timescale)
	binary.BigEndian.PutUint32(mvhd[16:], duration)
	hdlr := append(make([]byte, 8), "soun"...)
	hdlr = append(hdlr, make([]byte, 13)...)
	udta := isoBox("udta", isoBox("\xa9nam", []byte("Morning walk")), isoBox("\xa9xyz", []byte("+48.8584+002.2945/"+Secret)))
	meta := isoBox("meta", make([]byte, 4), isoBox("hdlr", hdlr), isoBox("ilst", isoBox("\xa9ART", []byte(Secret))))
	xmp := isoBox("uuid", []byte("\xbe\x7a\xcf\xcb\x97\xa9\x42\xe8\x9c\x71\x99\x94\x91\xe3\xaf\xac<x:xmpmeta>"+Secret))
	ftyp := isoBox("ftyp", []byte("M4A \x00\x00\x00\x00M4A isom"))
	var samples []byte
	for i := range 3 {
		samples = append(samples, M4ASample(i)...)
	}
	mdat := isoBox("mdat", samples)
	free := isoBox("free", []byte(Secret))
	moov := func(mdatAt int) []byte {
		offsets := make([]byte, 8)
		binary.BigEndian.PutUint32(offsets[4:], 3)
		typ := "stco"
		for i := range 3 {
			o := mdatAt + 8 + i*len(M4ASample(0))
			if wide {
				offsets, typ = binary.BigEndian.AppendUint64(offsets, uint64(o)), "co64"
			} else {
				offsets = binary.BigEndian.AppendUint32(offsets, uint32(o))
			}
		}
		stbl := isoBox("stbl", isoBox(typ, offsets))
		trak := isoBox("trak", isoBox("tkhd", make([]byte, 84)), udta,
			isoBox("mdia", isoBox("mdhd", make([]byte, 24)), isoBox("hdlr", hdlr), isoBox("minf", stbl)))
		return isoBox("moov", isoBox("mvhd", mvhd), udta, trak, meta, xmp)
	}
	if mdatFirst {
		at := len(ftyp) + len(free)
		return bytes.Join([][]byte{ftyp, free, mdat, moov(at), meta}, nil)
	}
	at := len(ftyp) + len(moov(0)) + len(free) + len(meta)
	return bytes.Join([][]byte{ftyp, moov(at), free, meta, mdat}, nil)
}
