import GraphKit
