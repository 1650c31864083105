// Package membudget is a byte budget that concurrent work reserves before it
// allocates: a FIFO weighted semaphore whose waiters give up when their
// context ends. vrender sizes each request's image work from the images'
// headers (decoded and processed pixels, the encoded features) and reserves it
// here before decoding, so a burst of large pictures queues instead of
// growing the heap past what the machine has.
//
// A reservation normally lasts as long as the work that holds the memory. When
// that memory outlives the function that reserved it (the features of a
// rendered request live until the HTTP response is written), the caller opens
// a Scope on the request's context; reservations made under it are returned
// when the scope ends, whatever path the request took.
//
// The budget is FIFO: a large request at the head of the queue is not
// overtaken by smaller ones behind it, so it cannot starve. A request larger
// than the whole budget is refused at once (TooLargeError) rather than
// waiting for ever.
package membudget
