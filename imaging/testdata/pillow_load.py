"""Reference for imaging's tests: vLLM's image load through the system Pillow.

usage: pillow_load.py OUTDIR FILE...   (OUTDIR/<i>.rgb gets the RGB bytes of FILE number i)
Prints one JSON line per file: {"i", "ok", "w", "h", "mode", "error"}. Same steps as
../shared/multimodal/golden/make_golden.py load_image_vllm (vLLM ImageMediaIO + _convert_image_mode).
BG=r,g,b in the environment sets the background (media_io_kwargs rgba_background_color).
"""
import io, json, os, re, sys
from PIL import Image, ImageOps

BG = tuple(int(x) for x in os.environ.get("BG", "255,255,255").split(","))


def load(data):
    image = Image.open(io.BytesIO(data))
    mode = image.mode
    try:
        image = ImageOps.exif_transpose(image)
    except Exception:
        pass
    image.load()
    if image.mode != "RGB":
        if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
            rgba = image.convert("RGBA")
            out = Image.new("RGB", rgba.size, BG)
            out.paste(rgba, mask=rgba.split()[3])
            image = out
        else:
            image = image.convert("RGB")
    return image, mode


def main():
    outdir = sys.argv[1]
    for i, path in enumerate(sys.argv[2:]):
        with open(path, "rb") as f:
            data = f.read()
        try:
            img, mode = load(data)
            with open(os.path.join(outdir, f"{i}.rgb"), "wb") as f:
                f.write(img.tobytes())
            print(json.dumps({"i": i, "ok": True, "w": img.width, "h": img.height, "mode": mode}))
        except Exception as e:
            msg = re.sub(r" at 0x[0-9a-f]+", "", str(e))
            print(json.dumps({"i": i, "ok": False, "error": msg, "type": type(e).__name__}))


if __name__ == "__main__":  # tools/refimage/bench.py imports load
    main()
