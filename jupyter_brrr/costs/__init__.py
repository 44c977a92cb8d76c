"""What each op costs and what the device can do: FLOPs and bytes per op, device peaks, and the roof each op is held against."""
