print("matter-sim: under construction")
