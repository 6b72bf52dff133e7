var home: Home?
