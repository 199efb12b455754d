print("trifactor")
