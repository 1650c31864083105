"""Writes the differential-test images for imaging's tests into OUTDIR with the system Pillow.

usage: make_variants.py OUTDIR   (prints the file names it wrote, one a line)
Deterministic content: gradients, noise and hard edges, so chroma upsampling and IDCT rounding show.
"""
import io, os, random, struct, sys
from PIL import Image

out = sys.argv[1]
rng = random.Random(31)
names = []


def picture(w, h, mode="RGB"):
    im = Image.new("RGB", (w, h))
    px = im.load()
    for y in range(h):
        for x in range(w):
            n = rng.randrange(-24, 25)
            edge = 200 if (x // 5 + y // 3) % 4 == 0 else 0
            px[x, y] = ((x * 255 // max(w - 1, 1) + n) % 256,
                        (y * 255 // max(h - 1, 1) + edge) % 256,
                        ((x * y) % 256 + n) % 256)
    return im.convert(mode) if mode != "RGB" else im


def save(im, name, **kw):
    im.save(os.path.join(out, name), **kw)
    names.append(name)


def exif_with_orientation(o):
    # Little-endian TIFF, IFD0 with one SHORT entry 0x0112.
    tiff = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) + struct.pack("<HHIHH", 0x0112, 3, 1, o, 0) + struct.pack("<I", 0)
    return b"Exif\x00\x00" + tiff


sizes = [(1, 1), (2, 2), (3, 5), (8, 8), (9, 17), (17, 9), (16, 16), (31, 33), (64, 48), (333, 517)]
for (w, h) in sizes:
    im = picture(w, h)
    for sub in (0, 1, 2):
        for q in (30, 75, 95, 100):
            save(im, f"j_{w}x{h}_s{sub}_q{q}.jpg", quality=q, subsampling=sub)
    save(im, f"j_{w}x{h}_prog.jpg", quality=85, progressive=True, subsampling=2)
    save(im.convert("L"), f"j_{w}x{h}_gray.jpg", quality=80)
    save(im.convert("CMYK"), f"j_{w}x{h}_cmyk.jpg", quality=90)
im = picture(200, 150)
save(im, "j_restart.jpg", quality=85, subsampling=2, restart_marker_blocks=3)
save(im, "j_restart_rows.jpg", quality=85, subsampling=1, restart_marker_rows=2, progressive=True)
save(im, "j_prog444.jpg", quality=92, progressive=True, subsampling=0)
save(im, "j_optimize.jpg", quality=70, optimize=True)
for o in range(1, 9):
    save(picture(37, 23), f"j_orient{o}.jpg", quality=90, exif=exif_with_orientation(o))
    save(picture(37, 23), f"p_orient{o}.png", exif=exif_with_orientation(o))

# PNG orientation from ImageMagick's raw profile text and from XMP (Pillow 9.4's getexif fallbacks).
from PIL import PngImagePlugin
for o in (3, 6, 8):
    exif = exif_with_orientation(o)
    for zip_ in (False, True):
        info = PngImagePlugin.PngInfo()
        info.add_text("Raw profile type exif", "\nexif\n%8d\n%s\n" % (len(exif), exif.hex()), zip=zip_)
        save(picture(21, 13), f"p_rawexif{o}_{int(zip_)}.png", pnginfo=info)
    info = PngImagePlugin.PngInfo()
    info.add_itxt("XML:com.adobe.xmp", f'<x:xmpmeta><rdf:Description tiff:Orientation="{o}"/></x:xmpmeta>', zip=(o == 6))
    save(picture(21, 13), f"p_xmp{o}.png", pnginfo=info)
    info = PngImagePlugin.PngInfo()
    info.add_itxt("XML:com.adobe.xmp", f"<tiff:Orientation>{o}</tiff:Orientation>")
    save(picture(21, 13), f"p_xmpel{o}.png", pnginfo=info, exif=exif_with_orientation(1)[:-14] + b"\x00\x00" + b"\x00" * 12)

# PNG modes.
base = picture(45, 31)
save(base, "p_rgb.png")
save(base.convert("L"), "p_l.png")
save(base.convert("1"), "p_1.png")
save(base.convert("LA"), "p_la.png")
rgba = base.copy(); rgba.putalpha(Image.linear_gradient("L").resize(base.size))
save(rgba, "p_rgba.png")
save(base.convert("P", palette=Image.ADAPTIVE, colors=16), "p_p16.png")
p = base.convert("P", palette=Image.ADAPTIVE, colors=64)
save(p, "p_p_trns_idx.png", transparency=3)
save(p, "p_p_trns_bytes.png", transparency=bytes(range(0, 256, 9)))
save(base.convert("L"), "p_l_trns.png", transparency=77)
save(base, "p_rgb_trns.png", transparency=tuple(base.getpixel((0, 0))))
g16 = Image.linear_gradient("L").resize((40, 30)).convert("I")
g16 = g16.point(lambda v: v * 3)
save(g16, "p_i16.png")
# GIF: transparency, a frame smaller than the screen, grayscale palette.
g = base.convert("P", palette=Image.ADAPTIVE, colors=32)
save(g, "g_plain.gif")
save(g, "g_trns.gif", transparency=5)
save(base.convert("L"), "g_gray.gif")
# BMP.
save(base, "b_rgb.bmp")
save(base.convert("P", palette=Image.ADAPTIVE, colors=200), "b_p.bmp")
save(base.convert("L"), "b_l.bmp")
# WebP.
save(base, "w_lossy.webp", quality=80)
save(picture(33, 17), "w_lossy_odd.webp", quality=50)
save(rgba, "w_lossy_alpha.webp", quality=80)
save(rgba, "w_lossless_alpha.webp", lossless=True)
save(base, "w_lossless.webp", lossless=True)
# Entropy data cut short by a marker: libjpeg warns, decodes zeros and Pillow keeps the image.
for name in ("j_64x48_s2_q75.jpg", "j_333x517_s0_q95.jpg", "j_restart.jpg"):
    data = open(os.path.join(out, name), "rb").read()
    cut = "j_cut_eoi_" + name
    open(os.path.join(out, cut), "wb").write(data[: len(data) * 2 // 3] + b"\xff\xd9")
    names.append(cut)
    cut = "j_cut_noeoi_" + name
    open(os.path.join(out, cut), "wb").write(data[:-2])
    names.append(cut)
# Hard errors found after the first scan, mid-decode (the header alone looks fine): a later scan naming
# a component the frame lacks, a later Huffman table whose code counts exceed 256. Pillow: broken stream.
def markers(data, code):
    return [i for i in range(2, len(data) - 1) if data[i] == 0xFF and data[i + 1] == code]
save(picture(40, 30).convert("CMYK"), "j_cmyk_prog.jpg", quality=90, progressive=True)
for name in ("j_333x517_prog.jpg", "j_restart_rows.jpg", "j_cmyk_prog.jpg"):
    data = bytearray(open(os.path.join(out, name), "rb").read())
    sos = markers(data, 0xDA)
    bad = bytearray(data)
    bad[sos[2] + 5] = 9  # the third scan's first component selector
    open(os.path.join(out, "j_badsos_" + name), "wb").write(bad)
    names.append("j_badsos_" + name)
    dht = [i for i in markers(data, 0xC4) if i > sos[0]]
    if dht:
        bad = bytearray(data)
        bad[dht[0] + 5 : dht[0] + 21] = bytes([255] * 16)  # the code counts of the first table in it
        open(os.path.join(out, "j_baddht_" + name), "wb").write(bad)
        names.append("j_baddht_" + name)
# A Huffman table with more than 256 codes just before EOI: libjpeg never reads it in a single-scan file
# (rows are out before), and meets it before the first row of a progressive one.
for name in ("j_64x48_s2_q75.jpg", "j_333x517_prog.jpg"):
    data = open(os.path.join(out, name), "rb").read()
    bad = data[:-2] + b"\xff\xc4\x00\x13\x00" + b"\xff" * 16 + b"\xff\xd9"
    open(os.path.join(out, "j_eoidht_" + name), "wb").write(bad)
    names.append("j_eoidht_" + name)
# Prefixes of one file per format: the header errors must be Pillow's.
for name in ("j_64x48_s2_q75.jpg", "j_orient6.jpg", "j_333x517_prog.jpg", "j_restart_rows.jpg", "p_rgba.png", "p_orient6.png", "g_trns.gif", "b_rgb.bmp", "b_p.bmp",
             "w_lossy.webp", "w_lossless_alpha.webp"):
    data = open(os.path.join(out, name), "rb").read()
    for n in sorted({0, 1, 2, 3, 5, 8, 11, 16, 20, 26, 30, 33, 40, 50, 60, 100, 200, 400, 700, 1000, 1500, 2500, 4000,
                     len(data) // 3, len(data) // 2, len(data) * 2 // 3, len(data) - 1}):
        if n < len(data):
            cut = f"cut{n}_{name}"
            open(os.path.join(out, cut), "wb").write(data[:n])
            names.append(cut)
# Files longer than Pillow's 65536-byte reads, cut across and near read boundaries.
big = picture(900, 700)
for name, kw in (("j_big420.jpg", dict(quality=97, subsampling=2)),
                 ("j_big444_rst.jpg", dict(quality=97, subsampling=0, restart_marker_rows=1)),
                 ("j_bigprog.jpg", dict(quality=95, subsampling=2, progressive=True))):
    save(big, name, **kw)
    data = open(os.path.join(out, name), "rb").read()
    for n in (65536 - 5, 65536, 65537, 70001, 131072, 131075, len(data) * 3 // 4, len(data) - 3):
        if n < len(data):
            cut = f"cut{n}_{name}"
            open(os.path.join(out, cut), "wb").write(data[:n])
            names.append(cut)
print("\n".join(names))
