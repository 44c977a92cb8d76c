"""Reading a profiler trace: the Kineto JSON reader (with its compiled scanner) and the tidy event tables."""
