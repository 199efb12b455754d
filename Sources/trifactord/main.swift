print("trifactord")
