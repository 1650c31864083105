package vision

// ErrorKind says which rule an image or a kwarg broke.
type ErrorKind uint8

const (
	// InvalidKwargs: mm_processor_kwargs that cannot be used (wrong type, negative pixels).
	InvalidKwargs ErrorKind = iota + 1
	// AspectRatio: the image is more than 200 times as long as it is wide (smart_resize).
	AspectRatio
	// EmptyResize: the kwargs let smart_resize shrink the image to nothing.
	EmptyResize
	// TooLarge: the resized image would exceed [MaxResizedPixels].
	TooLarge
	// InvalidImage: the RGB value itself is malformed (a caller's bug rather than a client's).
	InvalidImage
)

func (k ErrorKind) String() string {
	switch k {
	case InvalidKwargs:
		return "invalid_kwargs"
	case AspectRatio:
		return "aspect_ratio"
	case EmptyResize:
		return "empty_resize"
	case TooLarge:
		return "too_large"
	case InvalidImage:
		return "invalid_image"
	}
	return "unknown"
}

// Error is a request the processor refuses; Message is the text Hugging Face raises where it raises
// one (so clients see vLLM's message), else ours in the same style. The server answers it with 400.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return e.Message }
